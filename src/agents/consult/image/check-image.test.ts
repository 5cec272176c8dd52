import { describe, expect, it } from 'vitest';
import { errorOf } from '../../../testing/error-of.js';
import { jpegDeclaring, pngDeclaring, webpDeclaring } from '../../../testing/test-images.js';
import { checkImage, decodeImageBase64, MAX_IMAGE_PIXELS, MAX_IMAGE_SIDE_PX } from './check-image.js';

/** A real 1x1 PNG. */
const TINY_PNG_BASE64 = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';
const png = Buffer.from(TINY_PNG_BASE64, 'base64');
const jpeg = jpegDeclaring(640, 480);
const webp = webpDeclaring(300, 200);

describe('checkImage', () => {
  it('reads JPEG, PNG and WebP from their bytes', () => {
    expect(checkImage(jpeg, 1024)).toEqual({ mimeType: 'image/jpeg', width: 640, height: 480 });
    expect(checkImage(png, 1024)).toEqual({ mimeType: 'image/png', width: 1, height: 1 });
    expect(checkImage(webp, 1024)).toEqual({ mimeType: 'image/webp', width: 300, height: 200 });
  });

  it('reads the dimensions from the header and refuses an image over the documented bounds before anything decodes it', () => {
    const bomb = errorOf(() => checkImage(pngDeclaring(100_000, 100_000), 1024));
    expect(bomb.code).toBe('VALIDATION_FAILED');
    expect(bomb.message).toBe(`The image is 100000 x 100000 pixels; the largest accepted is ${MAX_IMAGE_SIDE_PX} pixels a side and 50 megapixels in all. Send a smaller photo (a lower camera resolution, or a cropped picture of the affected area).`);
    expect(bomb.details).toMatchObject({ width: 100_000, height: 100_000, maxSide: MAX_IMAGE_SIDE_PX, maxPixels: MAX_IMAGE_PIXELS });
    expect(errorOf(() => checkImage(jpegDeclaring(MAX_IMAGE_SIDE_PX + 1, 10), 1024)).details).toMatchObject({ width: MAX_IMAGE_SIDE_PX + 1 });
    expect(errorOf(() => checkImage(webpDeclaring(10_000, 10_000), 1024)).details).toMatchObject({ width: 10_000, height: 10_000 });
    // A 200-megapixel phone's photo scaled to 50 megapixels, and the longest side allowed, pass.
    expect(checkImage(jpegDeclaring(8_160, 6_120), 1024)).toMatchObject({ width: 8_160, height: 6_120 });
    expect(checkImage(pngDeclaring(MAX_IMAGE_SIDE_PX, 100), 1024)).toMatchObject({ width: MAX_IMAGE_SIDE_PX });
    // A header cut off before its size: the image starts right but cannot be read.
    expect(errorOf(() => checkImage(jpeg.subarray(0, 22), 1024)).message).toMatch(/^The image starts as a JPEG but its size cannot be read/);
  });

  it('refuses a JPEG-and-HTML polyglot, and keeps a photo with XMP metadata', () => {
    const polyglot = errorOf(() => checkImage(jpegDeclaring(64, 64, '<html><body><script>fetch("/api/users")</script></body></html>'), 4096));
    expect(polyglot.code).toBe('VALIDATION_FAILED');
    expect(polyglot.message).toMatch(/^The file is a JPEG that also carries web page markup/);
    const xmp = '<?xpacket begin=""?><x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF><rdf:Description/></rdf:RDF></x:xmpmeta>';
    expect(checkImage(jpegDeclaring(64, 64, xmp), 4096)).toMatchObject({ mimeType: 'image/jpeg' });
  });

  it('refuses other formats, naming what was found and what is accepted', () => {
    const gif = errorOf(() => checkImage(Buffer.from('GIF89a\x01\x00\x01\x00', 'latin1'), 1024));
    expect(gif.code).toBe('VALIDATION_FAILED');
    expect(gif.message).toBe('The file is a GIF image, not an image ClinAgent can analyse. Send a JPEG, PNG or WebP photo (most phones can save or share as JPEG).');
    expect(gif.details).toMatchObject({ found: 'a GIF image', accepted: ['image/jpeg', 'image/png', 'image/webp'] });

    const heic = Buffer.concat([Buffer.from([0, 0, 0, 0x18]), Buffer.from('ftypheic'), Buffer.alloc(8)]);
    expect(errorOf(() => checkImage(heic, 1024)).message).toContain('a HEIC/HEIF photo');
    expect(errorOf(() => checkImage(Buffer.from('%PDF-1.7\n'), 1024)).message).toContain('a PDF document');
    // A RIFF file that is not WebP (a WAV recording) is not accepted on its first four bytes.
    const wav = Buffer.concat([Buffer.from('RIFF'), Buffer.alloc(4), Buffer.from('WAVEfmt ')]);
    expect(errorOf(() => checkImage(wav, 1024)).message).toContain('unrecognised data starting with bytes 52 49 46 46 00 00 00 00');
    // A truncated JPEG marker is not a JPEG.
    expect(errorOf(() => checkImage(Buffer.from([0xff, 0xd8]), 1024)).code).toBe('VALIDATION_FAILED');
  });

  it('refuses an empty file and one over the limit, saying how to fix it', () => {
    const empty = errorOf(() => checkImage(Buffer.alloc(0), 1024));
    expect(empty.code).toBe('VALIDATION_FAILED');
    expect(empty.message).toMatch(/^The image is empty \(0 bytes\)/);

    const big = Buffer.concat([jpeg.subarray(0, jpeg.length - 2), Buffer.alloc(3 * 1024 * 1024), Buffer.from([0xff, 0xd9])]);
    const tooLarge = errorOf(() => checkImage(big, 2 * 1024 * 1024));
    expect(tooLarge.code).toBe('UPLOAD_TOO_LARGE');
    expect(tooLarge.status).toBe(413);
    expect(tooLarge.message).toBe('The image is 3.0 MB; the largest accepted is 2.0 MB (CONSULT_IMAGE_MAX_BYTES). Send a smaller photo (a lower camera resolution, or a cropped picture of the affected area).');
    expect(checkImage(big, big.length)).toMatchObject({ mimeType: 'image/jpeg' });
  });
});

describe('decodeImageBase64', () => {
  it('decodes bare base64, a data: URL and base64 broken over lines or without padding', () => {
    expect(decodeImageBase64(TINY_PNG_BASE64).equals(png)).toBe(true);
    expect(decodeImageBase64(`data:image/png;base64,${TINY_PNG_BASE64}`).equals(png)).toBe(true);
    // The declared type is not trusted: the bytes are returned for checkImage to read.
    expect(checkImage(decodeImageBase64(`data:image/gif;base64,${jpeg.toString('base64')}`), 1024)).toMatchObject({ mimeType: 'image/jpeg' });
    expect(decodeImageBase64(`  ${TINY_PNG_BASE64.slice(0, 40)}\r\n${TINY_PNG_BASE64.slice(40)}\n`).equals(png)).toBe(true);
    expect(decodeImageBase64(TINY_PNG_BASE64.replace(/=+$/, '')).equals(png)).toBe(true);
    expect(decodeImageBase64(webp.toString('base64url')).equals(webp)).toBe(true);
  });

  it('refuses text that is not base64 instead of decoding it into garbage', () => {
    const prose = errorOf(() => decodeImageBase64('a red itchy patch on the arm'));
    expect(prose.code).toBe('VALIDATION_FAILED');
    expect(prose.message).toBe(
      'The image is not valid base64: it contains " " at position 1, which base64 never does. Send the whole file encoded as base64 (or a data: URL), or the reference "attachment:<id>" of an uploaded image.',
    );
    expect(errorOf(() => decodeImageBase64(TINY_PNG_BASE64.slice(0, 21))).message).toContain('its length or padding is not that of base64 (it looks cut off)');
    expect(errorOf(() => decodeImageBase64('data:image/png,%89PNG')).message).toMatch(/^The image is a data: URL without ";base64"/);
    expect(errorOf(() => decodeImageBase64('data:image/png;base64,')).message).toMatch(/^The image is empty: no base64 data was sent/);
  });
});
