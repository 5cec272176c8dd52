/**
 * An answer's bytes in segments of their own (SEGMENT_BYTES each, the last one shorter): each piece the network
 * delivers is copied in as it arrives, so no single step on the server's thread copies the whole answer (83 MB in
 * one go held the event loop some 80 ms), and the segments can be moved to a worker thread without a copy.
 */
export type AnswerBytes = ArrayBuffer[];

/** What was read of an answer's body: at most the bound, and whether that was all of it. */
export interface ReadBytes {
  segments: AnswerBytes;
  complete: boolean;
}

const SEGMENT_BYTES = 4 * 1024 * 1024;

/**
 * Reads a response body up to `maxBytes` and stops there (the rest is cancelled, never buffered), so an answer
 * of any size costs at most the bound in memory.
 */
export async function readAtMost(response: Response, maxBytes: number): Promise<ReadBytes> {
  const segments: ArrayBuffer[] = [];
  if (!response.body) return { segments, complete: true };
  const reader = response.body.getReader();
  let segment = new Uint8Array(0);
  let used = 0;
  let total = 0;
  const append = (piece: Uint8Array) => {
    for (let at = 0; at < piece.byteLength; ) {
      if (used === segment.byteLength) {
        segment = new Uint8Array(SEGMENT_BYTES);
        segments.push(segment.buffer);
        used = 0;
      }
      const part = piece.subarray(at, at + segment.byteLength - used);
      segment.set(part, used);
      used += part.byteLength;
      at += part.byteLength;
    }
  };
  let complete = true;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    if (total + value.byteLength > maxBytes) {
      complete = false;
      await reader.cancel().catch(() => undefined);
      break;
    }
    append(value);
    total += value.byteLength;
  }
  // The last segment as long as what it holds (a copy of at most one segment).
  if (segments.length > 0) segments[segments.length - 1] = segment.buffer.slice(0, used);
  return { segments, complete };
}

/**
 * Whether the answer says, before any of it is read, that it is longer than `maxBytes`. Content-Length counts
 * the bytes sent, which for a compressed answer are fewer than it decodes to: so this only refuses early, and
 * readAtMost still counts what the body decodes to.
 */
export function declaredLongerThan(response: Response, maxBytes: number): boolean {
  return Number(response.headers.get('content-length') ?? Number.NaN) > maxBytes;
}

/** The answer decoded as Response.text() decodes it: UTF-8, a byte-order mark dropped, bad bytes replaced. */
export function answerText(segments: AnswerBytes): string {
  const decoder = new TextDecoder();
  let text = '';
  for (const segment of segments) text += decoder.decode(segment, { stream: true });
  return text + decoder.decode();
}

/**
 * Whether a JSON answer may be a list with items: it starts with "[" and the next character is not "]" (blanks
 * and a byte-order mark skipped). Looks at the first bytes only, so the server's thread never parses an answer
 * to decide what to ask next; the import worker parses it and refuses what is not a list.
 */
export function mayListItems(segments: AnswerBytes): boolean {
  const bytes = leadingBytes(segments);
  let next = bytes.next();
  const skipBlanks = () => {
    while (!next.done && (next.value === 0x20 || next.value === 0x09 || next.value === 0x0a || next.value === 0x0d)) next = bytes.next();
  };
  // A UTF-8 byte-order mark (EF BB BF), which decoding drops.
  if (next.value === 0xef) {
    next = bytes.next();
    next = bytes.next();
    next = bytes.next();
  }
  skipBlanks();
  if (next.value !== 0x5b) return false;
  next = bytes.next();
  skipBlanks();
  return !next.done && next.value !== 0x5d;
}

function* leadingBytes(segments: AnswerBytes): Generator<number> {
  for (const segment of segments) yield* new Uint8Array(segment);
}
