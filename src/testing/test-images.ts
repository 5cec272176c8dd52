/**
 * Image files made byte by byte for tests: just enough of each format for a reader to find its type and size (and
 * for a browser to take a JPEG for one), in any declared size, without shipping binary fixtures.
 */

const u16be = (n: number) => Buffer.from([(n >> 8) & 0xff, n & 0xff]);
const u32be = (n: number) => Buffer.from([(n >>> 24) & 0xff, (n >>> 16) & 0xff, (n >>> 8) & 0xff, n & 0xff]);
const u24le = (n: number) => Buffer.from([n & 0xff, (n >> 8) & 0xff, (n >> 16) & 0xff]);

/** A JPEG (JFIF) declaring `width` x `height`; `comment` goes into a COM segment, where a polyglot hides its page. */
export function jpegDeclaring(width: number, height: number, comment?: string): Buffer {
  const app0 = Buffer.concat([Buffer.from([0xff, 0xe0]), u16be(16), Buffer.from('JFIF\0', 'latin1'), Buffer.from([1, 1, 0]), u16be(1), u16be(1), Buffer.from([0, 0])]);
  const com = comment === undefined ? Buffer.alloc(0) : Buffer.concat([Buffer.from([0xff, 0xfe]), u16be(Buffer.byteLength(comment, 'latin1') + 2), Buffer.from(comment, 'latin1')]);
  const sof0 = Buffer.concat([Buffer.from([0xff, 0xc0]), u16be(11), Buffer.from([8]), u16be(height), u16be(width), Buffer.from([1, 1, 0x11, 0])]);
  return Buffer.concat([Buffer.from([0xff, 0xd8]), app0, com, sof0, Buffer.from([0xff, 0xd9])]);
}

/** A PNG whose header (IHDR) declares `width` x `height`; a few dozen bytes, whatever size it claims. */
export function pngDeclaring(width: number, height: number): Buffer {
  const ihdr = Buffer.concat([u32be(width), u32be(height), Buffer.from([8, 6, 0, 0, 0])]);
  return Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), u32be(13), Buffer.from('IHDR'), ihdr, u32be(0), u32be(0), Buffer.from('IEND'), u32be(0xae426082)]);
}

/** A WebP (VP8X) declaring `width` x `height`. */
export function webpDeclaring(width: number, height: number): Buffer {
  const vp8x = Buffer.concat([Buffer.from('VP8X'), Buffer.from([10, 0, 0, 0]), Buffer.alloc(4), u24le(width - 1), u24le(height - 1)]);
  const body = Buffer.concat([Buffer.from('WEBP'), vp8x]);
  return Buffer.concat([Buffer.from('RIFF'), Buffer.from([body.length & 0xff, (body.length >> 8) & 0xff, 0, 0]), body]);
}
