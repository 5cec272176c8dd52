import { ClinAgentError } from '../../../core/errors.js';

export type ImageMimeType = 'image/jpeg' | 'image/png' | 'image/webp';

/** What the vision models we target read, and what a phone or a screenshot produces. */
export const ACCEPTED_IMAGE_TYPES: readonly ImageMimeType[] = ['image/jpeg', 'image/png', 'image/webp'];
const ACCEPTED = 'JPEG, PNG or WebP';

const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];

/**
 * Formats people often send instead of a photo, recognised only to name them in the refusal: "this is a HEIC
 * photo" tells the patient what to change, "unrecognised bytes" does not.
 */
const KNOWN_OTHERS: Array<{ name: string; matches: (bytes: Buffer) => boolean }> = [
  { name: 'a GIF image', matches: (b) => ascii(b, 0, 4) === 'GIF8' },
  { name: 'a HEIC/HEIF photo (iPhone default)', matches: (b) => ascii(b, 4, 8) === 'ftyp' && /^(heic|heix|hevc|heim|heis|mif1|msf1|avif)$/.test(ascii(b, 8, 12)) },
  { name: 'a BMP image', matches: (b) => ascii(b, 0, 2) === 'BM' },
  { name: 'a TIFF image', matches: (b) => ascii(b, 0, 4) === 'II*\0' || ascii(b, 0, 4) === 'MM\0*' },
  { name: 'a PDF document', matches: (b) => ascii(b, 0, 5) === '%PDF-' },
  { name: 'a ZIP archive (or an Office document)', matches: (b) => ascii(b, 0, 4) === 'PK\x03\x04' },
  { name: 'an SVG or other text file', matches: (b) => /^\s*(<\?xml|<svg|<!doctype|<html)/i.test(ascii(b, 0, 64)) },
];

/**
 * The image's type, read from its first bytes (JPEG FF D8 FF, PNG's 8-byte signature, RIFF....WEBP), never from a
 * file name or a declared type, which anyone can set. Refuses an empty file, a file over `maxBytes`
 * (UPLOAD_TOO_LARGE) and any other format (VALIDATION_FAILED naming what was found and what is accepted).
 */
export function checkImage(bytes: Buffer, maxBytes: number): { mimeType: ImageMimeType } {
  if (bytes.length === 0) {
    throw new ClinAgentError('VALIDATION_FAILED', `The image is empty (0 bytes). Send a ${ACCEPTED} photo of the skin, or ask the patient to upload it again.`, { field: 'image', bytes: 0 });
  }
  if (bytes.length > maxBytes) {
    throw new ClinAgentError(
      'UPLOAD_TOO_LARGE',
      `The image is ${formatBytes(bytes.length)}; the largest accepted is ${formatBytes(maxBytes)} (CONSULT_IMAGE_MAX_BYTES). Send a smaller photo (a lower camera resolution, or a cropped picture of the affected area).`,
      { field: 'image', bytes: bytes.length, maxBytes },
    );
  }
  const mimeType = sniffImageType(bytes);
  if (mimeType) return { mimeType };
  const found = KNOWN_OTHERS.find((kind) => kind.matches(bytes))?.name ?? `unrecognised data starting with bytes ${hexPrefix(bytes)}`;
  throw new ClinAgentError('VALIDATION_FAILED', `The file is ${found}, not an image ClinAgent can analyse. Send a ${ACCEPTED} photo (most phones can save or share as JPEG).`, {
    field: 'image',
    found,
    accepted: ACCEPTED_IMAGE_TYPES,
  });
}

function sniffImageType(bytes: Buffer): ImageMimeType | undefined {
  if (bytes.length >= 3 && bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) return 'image/jpeg';
  if (bytes.length >= PNG_SIGNATURE.length && PNG_SIGNATURE.every((byte, i) => bytes[i] === byte)) return 'image/png';
  if (bytes.length >= 12 && ascii(bytes, 0, 4) === 'RIFF' && ascii(bytes, 8, 12) === 'WEBP') return 'image/webp';
  return undefined;
}

// Standard and URL-safe alphabets; padding optional, as some clients strip it.
const BASE64 = /^[A-Za-z0-9+/_-]*={0,2}$/;
const DATA_URL = /^data:([^,]*),/i;

/**
 * The bytes of an image sent as text: a data: URL (`data:image/png;base64,...`) or bare base64, line breaks
 * allowed. Only the bytes count: the declared type in a data: URL is not trusted (checkImage reads the
 * bytes). Anything that is not base64 is refused rather than decoded into garbage, which Buffer.from would do.
 */
export function decodeImageBase64(text: string): Buffer {
  let payload = text.trim();
  const dataUrl = DATA_URL.exec(payload);
  if (dataUrl) {
    if (!/;base64$/i.test(dataUrl[1]!.trim())) {
      throw new ClinAgentError('VALIDATION_FAILED', 'The image is a data: URL without ";base64". Send the image as base64, e.g. "data:image/jpeg;base64,/9j/4AAQ...", or as bare base64.', { field: 'image_base64' });
    }
    payload = payload.slice(dataUrl[0].length);
  }
  // Line breaks are how MIME and many tools wrap base64; a space inside is not (often a "+" a URL decoder turned into one).
  payload = payload.replace(/[\r\n\t]+/g, '');
  if (payload === '') {
    throw new ClinAgentError('VALIDATION_FAILED', 'The image is empty: no base64 data was sent. Send the photo as base64 (or a data: URL), or the reference "attachment:<id>" of an uploaded image.', { field: 'image_base64' });
  }
  const isBase64 = BASE64.test(payload) && payload.replace(/=+$/, '').length % 4 !== 1 && (!payload.includes('=') || payload.length % 4 === 0);
  if (!isBase64) {
    const bad = /[^A-Za-z0-9+/_=-]/.exec(payload);
    const why = bad ? `it contains "${bad[0]}" at position ${bad.index}, which base64 never does` : 'its length or padding is not that of base64 (it looks cut off)';
    throw new ClinAgentError('VALIDATION_FAILED', `The image is not valid base64: ${why}. Send the whole file encoded as base64 (or a data: URL), or the reference "attachment:<id>" of an uploaded image.`, {
      field: 'image_base64',
    });
  }
  return Buffer.from(payload.replace(/-/g, '+').replace(/_/g, '/'), 'base64');
}

function ascii(bytes: Buffer, start: number, end: number): string {
  return bytes.subarray(start, Math.min(end, bytes.length)).toString('latin1');
}

function hexPrefix(bytes: Buffer): string {
  return [...bytes.subarray(0, 8)].map((byte) => byte.toString(16).padStart(2, '0').toUpperCase()).join(' ');
}

function formatBytes(n: number): string {
  if (n >= 1024 * 1024) return `${(n / (1024 * 1024)).toFixed(1)} MB`;
  if (n >= 1024) return `${(n / 1024).toFixed(1)} KB`;
  return `${n} bytes`;
}
