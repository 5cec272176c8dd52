import { imageSize } from 'image-size';
import { ClinAgentError } from '../../../core/errors.js';

export type ImageMimeType = 'image/jpeg' | 'image/png' | 'image/webp';

/** What the vision models we target read, and what a phone or a screenshot produces. */
const ACCEPTED_IMAGE_TYPES: readonly ImageMimeType[] = ['image/jpeg', 'image/png', 'image/webp'];
const ACCEPTED = 'JPEG, PNG or WebP';

/**
 * The largest image accepted, read from its header before it is stored or sent to a vision model: a few hundred
 * bytes of PNG can declare 100 000 x 100 000 pixels, which a decoder would try to allocate (40 GB). A 200-megapixel
 * phone photo is 16 320 x 12 240; vision models scale everything down to about 2 000 pixels a side anyway.
 */
export const MAX_IMAGE_SIDE_PX = 16_384;
export const MAX_IMAGE_PIXELS = 50_000_000;

/**
 * Markup a browser would run if it ever rendered the file as a page: a JPEG-and-HTML polyglot starts as a valid
 * JPEG and carries a page in a comment segment. XMP metadata (`<x:xmpmeta`, `<rdf:RDF`) is legitimate and not matched.
 */
const ACTIVE_MARKUP = /<(script|html|body|iframe|object|embed|svg|form|meta|link|style)[\s>/]/i;

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
export function checkImage(bytes: Buffer, maxBytes: number): { mimeType: ImageMimeType; width: number; height: number } {
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
  if (mimeType) return { mimeType, ...checkContent(bytes, mimeType) };
  const found = KNOWN_OTHERS.find((kind) => kind.matches(bytes))?.name ?? `unrecognised data starting with bytes ${hexPrefix(bytes)}`;
  throw new ClinAgentError('VALIDATION_FAILED', `The file is ${found}, not an image ClinAgent can analyse. Send a ${ACCEPTED} photo (most phones can save or share as JPEG).`, {
    field: 'image',
    found,
    accepted: ACCEPTED_IMAGE_TYPES,
  });
}

/** The image's dimensions within bounds, and no page hidden in it; what is refused says why and what to send. */
function checkContent(bytes: Buffer, mimeType: ImageMimeType): { width: number; height: number } {
  const kind = mimeType.slice('image/'.length).toUpperCase();
  let size: { width?: number; height?: number };
  try {
    // image-size reads the whole underlying ArrayBuffer, and a small Buffer is a slice of a shared pool: it must see
    // these bytes alone, or a cut-off header would be completed from whatever lies after it.
    const own = bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength ? bytes : new Uint8Array(bytes);
    size = imageSize(own);
  } catch {
    size = {};
  }
  const { width, height } = size;
  if (!width || !height) {
    throw new ClinAgentError('VALIDATION_FAILED', `The image starts as a ${kind} but its size cannot be read from it (the file is cut off or damaged). Send the photo again, or save it anew as JPEG.`, { field: 'image' });
  }
  if (width > MAX_IMAGE_SIDE_PX || height > MAX_IMAGE_SIDE_PX || width * height > MAX_IMAGE_PIXELS) {
    throw new ClinAgentError(
      'VALIDATION_FAILED',
      `The image is ${width} x ${height} pixels; the largest accepted is ${MAX_IMAGE_SIDE_PX} pixels a side and ${MAX_IMAGE_PIXELS / 1_000_000} megapixels in all. Send a smaller photo (a lower camera resolution, or a cropped picture of the affected area).`,
      { field: 'image', width, height, maxSide: MAX_IMAGE_SIDE_PX, maxPixels: MAX_IMAGE_PIXELS },
    );
  }
  if (ACTIVE_MARKUP.test(bytes.toString('latin1'))) {
    throw new ClinAgentError('VALIDATION_FAILED', `The file is a ${kind} that also carries web page markup (HTML or script), which a photo never does. Send the photo straight from the camera or a screenshot, or save it anew as JPEG.`, { field: 'image', found: 'markup' });
  }
  return { width, height };
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
