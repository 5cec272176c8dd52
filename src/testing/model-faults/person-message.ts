/**
 * What a message meant for a person may not be: empty, a stack trace, a leaked `undefined`, an endpoint URL, raw
 * JSON, the provider's own error text, or longer than anyone reads. Each problem is one short line for the matrix.
 */

/** A message a person reads in one go; a 200 kB model answer passed through is a fault, not an answer. */
const PERSON_MESSAGE_MAX_CHARS = 20_000;

const STACK = /\n\s+at [\w.<>$]+ \(|\bat [\w./-]+\.(?:ts|js):\d+|\b(?:TypeError|ReferenceError|SyntaxError|RangeError): /;
const LEAKED_VALUES = /\bundefined\b|\[object Object\]|\bNaN\b/;
const URL = /\bhttps?:\/\/(?:127\.0\.0\.1|localhost|10\.\d+\.\d+\.\d+|\[::1\])[^\s)]*|\/v1\/chat\/completions/;
/** The scripted model's own error bodies ("scripted status 500", "upstream exploded ..."): provider text, not ours. */
const PROVIDER_TEXT = /scripted (?:status|model)|upstream exploded|server_error|Rate limit reached for requests/;
/** A validation issue's path with an index ("turns.0:", "facts.0.text:"): our internals, not the person's words. */
const VALIDATION_PATH = /(?:^|[\s(])[A-Za-z_]+(?:\.\d+)+(?:\.[A-Za-z_]+)*:\s/;
/** An object with quoted keys, anywhere in the text: a decision or a data block shown as it came from the model. */
const RAW_JSON = /\{\s*"[^"\n]{1,60}"\s*:|^\s*\[\s*[{"\d]/;

export function personMessageProblems(message: unknown): string[] {
  if (typeof message !== 'string') return [`no message for the person (got ${message === undefined ? 'nothing' : typeof message})`];
  const text = message.trim();
  if (!text) return ['the message for the person is empty'];
  const problems: string[] = [];
  if (text.length > PERSON_MESSAGE_MAX_CHARS) problems.push(`the message is ${text.length} characters (at most ${PERSON_MESSAGE_MAX_CHARS})`);
  if (STACK.test(text)) problems.push('the message holds a stack trace');
  if (LEAKED_VALUES.test(text)) problems.push(`the message holds "${LEAKED_VALUES.exec(text)![0]}"`);
  if (URL.test(text)) problems.push(`the message names an endpoint (${URL.exec(text)![0].slice(0, 60)})`);
  if (PROVIDER_TEXT.test(text)) problems.push("the message quotes the model provider's error");
  if (VALIDATION_PATH.test(text)) problems.push(`the message quotes an internal validation path (${VALIDATION_PATH.exec(text)![0].trim()})`);
  if (RAW_JSON.test(text)) problems.push(`the message holds raw JSON (${snippet(text.slice(Math.max(0, text.search(RAW_JSON))))})`);
  return problems;
}

/** The start of a text for a report line, on one line. */
export function snippet(text: string, chars = 80): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > chars ? `${flat.slice(0, chars)}…` : flat;
}
