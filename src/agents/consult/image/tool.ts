import { z } from 'zod';
import { ClinAgentError } from '../../../core/errors.js';
import type { ToolDefinition } from '../../../core/tools/registry.js';
import { analyzeSkinImage, type SkinImageAnalysis, type VisionModel } from './analyze-image.js';
import { checkImage, decodeImageBase64 } from './check-image.js';

const ATTACHMENT_PREFIX = 'attachment:';
/** The consult names uploads "attachment:1", "attachment:2", ...; ids (a UUID) are accepted too. */
const ATTACHMENT_REF = /^attachment:[A-Za-z0-9-]{1,64}$/;

const Args = z.object({
  image_base64: z
    .string()
    .trim()
    .min(1, 'give the image: "attachment:<id>" of a photo the patient uploaded, or the image as base64')
    .describe('the photo: its reference "attachment:<n>" for an image the patient uploaded in this consult (preferred), or the image itself as base64 or a data: URL'),
  context: z.string().max(4000).describe('what the patient reported about the lesion (where, how long, symptoms), to read the photo against; no names or other identifiers'),
});
type Args = z.infer<typeof Args>;

export interface AnalyzeSkinImageDeps {
  /** Absent when VISION_MODEL is not set (createVisionGateway). */
  vision?: VisionModel;
  /** An image uploaded in this consult, by its whole reference ("attachment:1"); undefined when there is none. */
  loadAttachment(ref: string): Promise<{ bytes: Buffer; mimeType: string } | undefined>;
  /** config.vision.maxImageBytes */
  maxBytes: number;
}

export const NO_VISION_MESSAGE =
  'No vision model is configured: set VISION_MODEL (and VISION_BASE_URL/VISION_API_KEY if it is served elsewhere) to analyse images; ask the patient to describe the lesion instead.';

/**
 * `analyze_skin_image(image_base64, context)` (seed 003 section 3). The image is checked by its bytes whichever
 * way it came (a stored attachment's recorded type is not trusted either), then described by the vision model.
 */
export function createAnalyzeSkinImageTool(deps: AnalyzeSkinImageDeps): ToolDefinition<Args> {
  return {
    name: 'analyze_skin_image',
    description:
      'Describe a photo of the skin with the vision model: visible findings (morphology, colour, border, distribution) and the conditions it is consistent with, each with a likelihood (low, moderate, high). Use it when the patient has uploaded a photo; combine the result with the history, it is not a diagnosis.',
    schema: Args,
    async run({ image_base64: image, context }): Promise<SkinImageAnalysis> {
      if (!deps.vision) throw new ClinAgentError('CONFIG_MISSING', NO_VISION_MESSAGE, { field: 'VISION_MODEL' });
      const bytes = image.startsWith(ATTACHMENT_PREFIX) ? await loadAttachmentBytes(deps, image) : decodeImageBase64(image);
      const { mimeType } = checkImage(bytes, deps.maxBytes);
      return analyzeSkinImage(deps.vision, { bytes, mimeType, context });
    },
  };
}

async function loadAttachmentBytes(deps: AnalyzeSkinImageDeps, ref: string): Promise<Buffer> {
  if (!ATTACHMENT_REF.test(ref)) {
    throw new ClinAgentError('VALIDATION_FAILED', `"${ref.slice(0, 80)}" is not an attachment reference: use it exactly as the conversation gives it, e.g. "attachment:1".`, {
      field: 'image_base64',
    });
  }
  const attachment = await deps.loadAttachment(ref);
  if (!attachment) {
    throw new ClinAgentError('NOT_FOUND', `This consult has no uploaded image "${ref}". Use the reference of an image uploaded in this consult, or ask the patient to upload the photo again.`, {
      field: 'image_base64',
    });
  }
  return attachment.bytes;
}
