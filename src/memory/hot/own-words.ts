import { detectLanguage } from '../../core/language.js';

/**
 * Whether a line a model proposes for hot memory is the person's own words (issue 31). Hot memory goes into every
 * later prompt of the project, so a line the model made up (an injected "IGNORE PREVIOUS INSTRUCTIONS", its own
 * reply, a translation, a "fact" nobody stated) would steer every answer afterwards under the person's name. The
 * check is deterministic, never another model call:
 * - both texts are normalised: NFKC (full-width ＰＩ and half-width PI are one form), lower case, punctuation and
 *   spacing dropped;
 * - the fact's content words must all appear among the words of the text it cites: Latin words and numbers as
 *   whole words (a plural or -ed/-ing ending is folded, "reports" matches "report"), Chinese by characters, since
 *   Chinese has no spaces to split words on and a shortened line ("汇报只要结论" from "以后汇报只要结论") keeps
 *   them; a handful of function words ("the", "to", "的", "了") need not appear;
 * - a line with no content word at all, or one that reads as an instruction to the model about its instructions
 *   ("ignore previous instructions", "忽略之前的指令", "system prompt"), is refused even when the text it cites
 *   holds the words: such text in a person's message is pasted, not said to be remembered.
 * So the model may shorten what the person said (drop words, reorder), never add a word, translate or reply. What
 * it cannot catch: a line that drops a "not" keeps only said words yet says the opposite; the prompts ask for the
 * person's words as written, and the editor shows every line with the turn it came from.
 */
type OwnWordsVerdict = { ok: true } | { ok: false; reason: string };

/** Words a shortened line may carry without the person having typed them: articles, prepositions, particles. */
const FUNCTION_WORDS: ReadonlySet<string> = new Set(
  [
  'a', 'an', 'the', 'to', 'of', 'in', 'on', 'at', 'for', 'by', 'with', 'from', 'as', 'and', 'or', 'is', 'are', 'be', 'it', 'its',
  'this', 'that', 'we', 'our', 'you', 'your', 'i', 'me', 'my', 'please',
  '的', '了', '着', '是', '在', '和', '与', '及', '或', '也', '都', '就', '把', '被', '将', '之', '其', '这', '那', '吧', '呢', '啊', '吗', '请', '我', '你', '您', '们',
  ].map(fold),
);

/** Text that talks to the model about its own instructions, in English and Chinese; never a fact about a trial. */
const INSTRUCTION_LIKE: readonly RegExp[] = [
  /\b(ignore|disregard|forget|override)\b[^.\n]{0,40}\b(instructions?|prompts?|rules|guidelines|above|previous)\b/i,
  /\bsystem\s+prompt\b/i,
  /\byou\s+are\s+now\b/i,
  /(忽略|无视|忘记|忘掉)[^。\n]{0,20}(指令|指示|提示|规则|设定|要求)/u,
  /系统提示/u,
];

const HAN = /\p{Script=Han}/u;

/** The words of a text as they are compared: Chinese characters one by one, other words whole and folded. */
function wordsOf(text: string): string[] {
  const words: string[] = [];
  for (const match of text.normalize('NFKC').toLowerCase().matchAll(/\p{Script=Han}|(?:(?!\p{Script=Han})[\p{L}\p{N}])+/gu)) {
    const word = match[0];
    words.push(HAN.test(word) ? word : fold(word));
  }
  return words;
}

/** One form for the usual English endings, so the person's "reports" and the line's "report" are one word. */
function fold(word: string): string {
  if (!/^[a-z]+$/.test(word) || word.length <= 3) return word;
  if (word.endsWith('ies')) return `${word.slice(0, -3)}y`;
  if (/(ss|sh|ch|x)es$/.test(word)) return word.slice(0, -2);
  if (word.endsWith('ing') && word.length > 5) return word.slice(0, -3);
  if (word.endsWith('ed') && word.length > 4) return word.slice(0, -2);
  if (word.endsWith('s') && !word.endsWith('ss')) return word.slice(0, -1);
  return word;
}

export function isInstructionLike(text: string): boolean {
  const normalised = text.normalize('NFKC');
  return INSTRUCTION_LIKE.some((pattern) => pattern.test(normalised));
}

/**
 * `fact` against `said`, the person's own text it cites (their chat message, their feedback comment). The reason
 * names counts and languages, never the words, so it can go into logs and the answer.
 */
export function checkOwnWords(fact: string, said: string): OwnWordsVerdict {
  if (isInstructionLike(fact)) return { ok: false, reason: 'it reads as an instruction to the assistant about its own instructions, not as a fact about the project' };
  const content = wordsOf(fact).filter((word) => !FUNCTION_WORDS.has(word));
  if (!content.length) return { ok: false, reason: 'it has no words to check against what was said' };
  const saidWords = new Set(wordsOf(said));
  const missing = new Set(content.filter((word) => !saidWords.has(word)));
  if (!missing.size) return { ok: true };
  const factLanguage = detectLanguage(fact);
  const saidLanguage = detectLanguage(said);
  if (factLanguage !== saidLanguage) {
    return { ok: false, reason: `it is written in ${LANGUAGE_NAMES[factLanguage]} while the message it cites is in ${LANGUAGE_NAMES[saidLanguage]}` };
  }
  return { ok: false, reason: `${missing.size} of its ${new Set(content).size} words are not in the message it cites` };
}

const LANGUAGE_NAMES = { zh: 'Chinese', en: 'English' } as const;
