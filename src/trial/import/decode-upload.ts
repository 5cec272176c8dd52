import { analyse } from 'chardet';
import { ClinAgentError } from '../../core/errors.js';

/**
 * Turns an uploaded CSV file into text. REDCap exports UTF-8, but a file opened and saved again by Excel on
 * Chinese Windows is GBK/GB18030 ("CSV (Comma delimited)"), and decoding that as UTF-8 would store 年龄 as
 * replacement characters for good. So:
 * - a byte-order mark decides (UTF-8, as Excel's "CSV UTF-8" writes it, or UTF-16), and is dropped;
 * - bytes that are valid UTF-8 are UTF-8 (ASCII included);
 * - otherwise the bytes must decode as GB18030 without a single invalid sequence, and either chardet's
 *   statistics name GB18030 ahead of every other East Asian encoding, or (in a file too short for
 *   statistics) every two-byte character lies in GB2312, the character set GBK text actually uses;
 * - anything else (Big5, Shift_JIS, Latin-1, a truncated or binary file) is refused, naming the file and
 *   saying how to save it as UTF-8. Guessing would store mojibake that no later step can detect.
 */

type UploadEncoding = 'utf-8' | 'utf-16le' | 'utf-16be' | 'gb18030';

interface DecodedUpload {
  text: string;
  encoding: UploadEncoding;
}

/** What to call the file in an error: the form field it came in and, if known, the user's file name. */
interface UploadName {
  field: string;
  filename?: string;
}

// chardet reports confidence 0-100; GB18030 text of a few lines already scores 90+, Latin-1 stays below 50.
const MIN_GB18030_CONFIDENCE = 50;
const STATISTICS_SAMPLE_BYTES = 256 * 1024;
const OTHER_EAST_ASIAN = new Set(['Big5', 'Shift_JIS', 'EUC-JP', 'EUC-KR', 'ISO-2022-JP', 'ISO-2022-KR', 'ISO-2022-CN']);

export function decodeUpload(bytes: Uint8Array, name: UploadName): DecodedUpload {
  if (startsWith(bytes, [0xef, 0xbb, 0xbf])) return { text: strict('utf-8', bytes.subarray(3), name, 'UTF-8'), encoding: 'utf-8' };
  if (startsWith(bytes, [0xff, 0xfe])) return { text: strict('utf-16le', bytes.subarray(2), name, 'UTF-16'), encoding: 'utf-16le' };
  if (startsWith(bytes, [0xfe, 0xff])) return { text: strict('utf-16be', bytes.subarray(2), name, 'UTF-16'), encoding: 'utf-16be' };

  const utf8 = tryDecode('utf-8', bytes);
  if (utf8 !== undefined) return { text: utf8, encoding: 'utf-8' };

  const gb18030 = tryDecode('gb18030', bytes);
  // The statistics need a sample, not the whole of a 50 MB file; a character cut at the end hardly matters.
  const candidates = analyse(bytes.subarray(0, STATISTICS_SAMPLE_BYTES));
  const confidenceOf = (test: (encoding: string) => boolean) => Math.max(0, ...candidates.filter((c) => test(c.name)).map((c) => c.confidence));
  const gbConfidence = confidenceOf((encoding) => encoding === 'GB18030');
  const other = candidates.find((c) => OTHER_EAST_ASIAN.has(c.name) && c.confidence > gbConfidence && c.confidence >= MIN_GB18030_CONFIDENCE);
  if (gb18030 !== undefined && !other) {
    if (gbConfidence >= MIN_GB18030_CONFIDENCE || isGb2312Text(bytes)) return { text: gb18030, encoding: 'gb18030' };
  }
  const guess = other ? ` (it looks like ${other.name})` : '';
  throw new ClinAgentError(
    'VALIDATION_FAILED',
    `${describe(name)} is not UTF-8 text and not recognisably GBK/GB18030${guess}, so it was not imported: its Chinese labels and values would be stored garbled. Open it in Excel and save it as "CSV UTF-8 (Comma delimited)" (WPS: "CSV UTF-8"), or export it from REDCap again, then upload it again.`,
    { field: name.field, filename: name.filename ?? null },
  );
}

/** The upload's text, whatever encoding decodeUpload accepted. */
export function decodeUploadText(bytes: Uint8Array, name: UploadName): string {
  return decodeUpload(bytes, name).text;
}

function tryDecode(encoding: string, bytes: Uint8Array): string | undefined {
  try {
    return new TextDecoder(encoding, { fatal: true, ignoreBOM: true }).decode(bytes);
  } catch {
    return undefined;
  }
}

function strict(encoding: string, bytes: Uint8Array, name: UploadName, label: string): string {
  const text = tryDecode(encoding, bytes);
  if (text !== undefined) return text;
  throw new ClinAgentError(
    'VALIDATION_FAILED',
    `${describe(name)} starts with a ${label} byte-order mark but is not valid ${label} (the file may be damaged or cut off). Save it again as "CSV UTF-8 (Comma delimited)" in Excel, or export it from REDCap again, then upload it again.`,
    { field: name.field, filename: name.filename ?? null },
  );
}

/**
 * Whether every byte of 0x80 and above belongs to a GB2312 character: a lead byte A1-A9 (symbols) or B0-F7
 * (hanzi) followed by a trail byte A1-FE. Latin-1 text ("Zürich": FC 72) and Big5 (trail bytes 40-7E)
 * fail this; short GBK labels (年龄 C4 EA C1 E4) pass.
 */
function isGb2312Text(bytes: Uint8Array): boolean {
  let hasDoubleByte = false;
  for (let i = 0; i < bytes.length; i++) {
    const lead = bytes[i]!;
    if (lead < 0x80) continue;
    const trail = bytes[i + 1];
    const isLead = (lead >= 0xa1 && lead <= 0xa9) || (lead >= 0xb0 && lead <= 0xf7);
    if (!isLead || trail === undefined || trail < 0xa1 || trail > 0xfe) return false;
    hasDoubleByte = true;
    i++;
  }
  return hasDoubleByte;
}

function startsWith(bytes: Uint8Array, prefix: ReadonlyArray<number>): boolean {
  return prefix.every((byte, i) => bytes[i] === byte);
}

function describe(name: UploadName): string {
  return name.filename ? `The file "${name.filename}" sent as "${name.field}"` : `The "${name.field}" file`;
}
