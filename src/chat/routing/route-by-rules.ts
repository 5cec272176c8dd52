import {
  ABOUT_ASSISTANT,
  DATA_QUESTION,
  FACT_PREFIXES,
  HISTORY,
  LEADING_CONNECTOR,
  MEMORY_TRIGGERS,
  NOTHING_LEFT,
  PROHIBITION,
  QC_ACTION,
  QC_QUESTION,
  QC_WORDS,
  QUESTION,
  RECORD_IDS,
  SMALL_TALK,
  SPLITTERS,
  STATE,
  WRITE_REQUEST,
} from './route-intent-keywords.js';
import { detectLanguage, MAX_INTENTS, type Intent, type IntentType, type MemoryFactSection, type RouteOptions, type RoutedMessage, type SkillOption } from './route-intent-types.js';

/**
 * Matching looks at the start of a message only: intents are stated up front, and a pasted document must not
 * cost more than a glance.
 */
const MAX_MATCH_CHARS = 4000;
/** "One short line": a fact longer than this is cut, the memory editor shows the rest was not kept. */
const MAX_FACT_CHARS = 200;

/**
 * The router without a model (seed 000's keyword intent detection): keyword tables per intent in Chinese and
 * English, multi-intent messages split on connectors and sentence ends, record ids, memory facts and skill
 * names read from the text. Used when the model is unavailable or its answer stays unusable. It never throws:
 * whatever it cannot place is one 'unclear' intent, and the assistant asks back.
 */
export function routeByRules(message: string, options: RouteOptions): RoutedMessage {
  const text = (typeof message === 'string' ? message : String(message ?? '')).slice(0, MAX_MATCH_CHARS).trim();
  const language = detectLanguage(text);
  if (!text) return { intents: [{ type: 'unclear', text: '' }], by: 'rules', language };
  const skills = Array.isArray(options?.skills) ? options.skills : [];

  const parts = mergeParts(splitParts(text).map((part) => ({ ...part, ...classify(text.slice(part.start, part.end), skills) })), text);
  const intents = parts.map((part) => describe(part.type, parts.length === 1 ? text : text.slice(part.start, part.end).replace(/[\s，,、]+$/u, '').trim(), skills));
  // A memory instruction shapes how everything else in the message is answered ("以后汇报只要结论"): a
  // prerequisite, so it goes first (seed 000 V2.9, "按依赖关系排序"); the rest keep the user's order.
  intents.sort((a, b) => Number(b.type === 'memory_instruction') - Number(a.type === 'memory_instruction'));
  return { intents, by: 'rules', language };
}

interface Part {
  start: number;
  end: number;
}

interface ClassifiedPart extends Part {
  type: IntentType;
  /** A greeting or thanks: dropped when the message holds anything else. */
  isSmallTalk: boolean;
}

/** The message cut at connectors and sentence ends; offsets into `text`, so merged parts keep the user's words. */
function splitParts(text: string): Part[] {
  const cuts: Array<[number, number]> = [];
  for (const splitter of SPLITTERS) {
    for (const match of text.matchAll(splitter)) cuts.push([match.index, match.index + match[0].length]);
  }
  cuts.sort((a, b) => a[0] - b[0]);
  const parts: Part[] = [];
  let start = 0;
  for (const [from, to] of cuts) {
    if (from < start) {
      start = Math.max(start, to);
      continue;
    }
    if (from > start) parts.push({ start, end: from });
    start = to;
  }
  if (start < text.length) parts.push({ start, end: text.length });
  return parts.filter((part) => !NOTHING_LEFT.test(text.slice(part.start, part.end).replace(LEADING_CONNECTOR, '')));
}

/** The one intent of a part, by priority: an instruction to remember, a question about the assistant, a change, QC, history, data, small talk. */
function classify(raw: string, skills: ReadonlyArray<SkillOption>): { type: IntentType; isSmallTalk: boolean } {
  const part = raw.trim().replace(LEADING_CONNECTOR, '');
  const is = (type: IntentType) => ({ type, isSmallTalk: false });
  if (MEMORY_TRIGGERS.some((pattern) => pattern.test(part))) return is('memory_instruction');
  if (ABOUT_ASSISTANT.test(part)) return is('chit_chat');
  if (WRITE_REQUEST.some((pattern) => pattern.test(part))) return is('write_request');
  const isQcQuestion = QC_QUESTION.test(part);
  // A named skill is as good as an action word: "能帮我用核心数据核查检查一下 S001 吗" asks for a run.
  if ((QC_ACTION.some((pattern) => pattern.test(part)) || namedSkill(part, skills)) && !isQcQuestion) return is('qc_task');
  if (QC_WORDS.test(part) && !QUESTION.test(part)) return is('qc_task');
  if (HISTORY.test(part)) return is('history_question');
  if (DATA_QUESTION.test(part)) return is('data_question');
  if (SMALL_TALK.test(part)) return { type: 'chit_chat', isSmallTalk: true };
  return is('unclear');
}

/**
 * What the parts add up to: a part the tables cannot place belongs to the one before it ("P001 入组了吗？
 * P002 呢" stays one question), greetings go when there is more, neighbouring questions of one kind are asked
 * together, and past MAX_INTENTS the last intent takes the rest of the message.
 */
function mergeParts(parts: ClassifiedPart[], text: string): ClassifiedPart[] {
  const hasSubstance = parts.some((part) => !part.isSmallTalk && part.type !== 'unclear');
  const kept = hasSubstance ? parts.filter((part) => !part.isSmallTalk) : parts;
  const merged: ClassifiedPart[] = [];
  for (const part of kept) {
    const last = merged.at(-1);
    if (last && (part.type === 'unclear' || (part.type === last.type && isAskedTogether(part.type)))) {
      last.end = part.end;
      continue;
    }
    if (last?.type === 'unclear' && part.type !== 'unclear') {
      // An unplaced opening ("P003:") belongs to what follows it.
      merged[merged.length - 1] = { ...part, start: last.start };
      continue;
    }
    merged.push({ ...part });
  }
  if (!merged.length) return [{ start: 0, end: text.length, type: 'unclear', isSmallTalk: false }];
  if (merged.length > MAX_INTENTS) {
    const last = merged[MAX_INTENTS - 1]!;
    last.end = merged.at(-1)!.end;
    merged.length = MAX_INTENTS;
  }
  return merged;
}

/** Questions go to one investigation together; each change, QC run and fact is its own action. */
function isAskedTogether(type: IntentType): boolean {
  return type === 'data_question' || type === 'history_question' || type === 'chit_chat' || type === 'unclear';
}

function describe(type: IntentType, text: string, skills: ReadonlyArray<SkillOption>): Intent {
  const intent: Intent = { type, text };
  if (type === 'qc_task') {
    const recordIds = extractRecordIds(text);
    if (recordIds.length) intent.recordIds = recordIds;
    const skill = namedSkill(text, skills);
    if (skill) intent.skillId = skill.id;
  }
  if (type === 'memory_instruction') intent.fact = extractFact(text);
  return intent;
}

/** Record ids in the order they are written, each once. Prefixed ids are upper-cased ("p003" -> "P003"). */
function extractRecordIds(text: string): string[] {
  const found: Array<{ at: number; id: string }> = [];
  for (const pattern of RECORD_IDS) {
    for (const match of text.matchAll(pattern)) {
      const id = (match[1] ?? match[0]).toUpperCase();
      found.push({ at: match.index + match[0].length - (match[1] ?? match[0]).length, id });
    }
  }
  found.sort((a, b) => a.at - b.at);
  return [...new Set(found.map((f) => f.id))];
}

/** The offered skill whose id or name (or one side of a bilingual "中文 / English" name) appears; the longest match wins. */
function namedSkill(text: string, skills: ReadonlyArray<SkillOption>): SkillOption | undefined {
  const haystack = text.toLowerCase();
  let best: { skill: SkillOption; length: number } | undefined;
  for (const skill of skills) {
    if (!skill || typeof skill.id !== 'string') continue;
    const names = [skill.id, skill.name, ...(typeof skill.name === 'string' ? skill.name.split(/\s*\/\s*/) : [])];
    for (const name of names) {
      const needle = typeof name === 'string' ? name.trim().toLowerCase() : '';
      if (needle.length >= 2 && haystack.includes(needle) && needle.length > (best?.length ?? 0)) best = { skill, length: needle.length };
    }
  }
  return best?.skill;
}

/** The fact without its trigger words ("记住：以后汇报只要结论" -> "汇报只要结论"), on one line, and its section. */
function extractFact(text: string): { section: MemoryFactSection; text: string } {
  let fact = text.replace(/\s+/g, ' ').trim();
  for (let changed = true; changed; ) {
    changed = false;
    for (const prefix of FACT_PREFIXES) {
      const next = fact.replace(prefix, '');
      if (next !== fact) {
        fact = next;
        changed = true;
      }
    }
  }
  fact = fact.replace(/[\s。.!！；;，,]+$/u, '');
  if (!fact) fact = text.replace(/\s+/g, ' ').trim();
  fact = fact.slice(0, MAX_FACT_CHARS);
  const section: MemoryFactSection = PROHIBITION.test(fact) ? 'prohibitions' : STATE.test(fact) ? 'state' : 'preferences';
  return { section, text: fact };
}
