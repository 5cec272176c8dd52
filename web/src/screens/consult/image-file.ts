/**
 * The photo types the consult's image check accepts (src/agents/consult/image/check-image.ts reads the bytes). The
 * picker offers only these; a file the browser names as another type is refused here at once, so the patient does not
 * wait for an upload the server would refuse. The size limit is the server's (CONSULT_IMAGE_MAX_BYTES): its refusal
 * says how large the image is and what is accepted.
 */
export const ACCEPTED_IMAGE_TYPES = ['image/jpeg', 'image/png', 'image/webp'] as const;

/** For the file input's `accept`. */
export const IMAGE_ACCEPT = ACCEPTED_IMAGE_TYPES.join(',');

export type ImageProblem = 'type';

/** Null when the file may be sent. A file without a declared type (some systems give none) is left to the server. */
export function imageProblem(file: Pick<File, 'type'>): ImageProblem | null {
  if (file.type === '') return null;
  return (ACCEPTED_IMAGE_TYPES as readonly string[]).includes(file.type.toLowerCase()) ? null : 'type';
}

/** "512 B", "84 KB", "3.2 MB": the preview's caption. */
export function formatFileSize(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${Math.round(bytes / 1024)} KB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
}
