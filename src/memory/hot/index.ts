import type { User } from '../../core/auth/users.js';
import { ClinAgentError } from '../../core/errors.js';
import { dataBlock } from '../../core/llm/untrusted-data.js';
import type { HotMemoryLine, HotMemoryService, MemoryDeps, NewFact } from '../types.js';
import { assertMemoryReader, assertMemoryWriter } from './access.js';
import { distillHotMemory } from './distill.js';
import { selectProjectsToDistill } from './distill-queries.js';
import { selectOwnUserTurn } from './cited-turn-queries.js';
import { cleanText, isSection, isSource, makeLine } from './lines.js';
import { parseHotMemoryMarkdown } from './markdown.js';
import { selectMemory, selectVersion, selectVersionRange, selectVersions } from './memory-queries.js';
import { checkOwnWords } from './own-words.js';
import { pruneHotMemory } from './prune.js';
import { toVersionView, toView } from './view.js';
import { writeHotMemory } from './write-hot-memory.js';

/** The label of the hot memory's data block in every assistant prompt. */
const HOT_MEMORY_LABEL = 'hot_memory';

const MAX_FACTS_PER_WRITE = 50;
/** A fact is a line; a paragraph belongs in a document, not in memory every prompt carries. */
const MAX_FACT_CHARS = 500;
/** The editor's document; the token cap is far below this, it only keeps a pasted file from being parsed. */
const MAX_DOCUMENT_CHARS = 100_000;
const DEFAULT_VERSIONS = 100;
const MAX_VERSIONS = 500;

/**
 * Hot memory (seed 002): one short markdown document per project, always in the trial assistant's prompt, that
 * people edit by hand as the "emergency stop" and that the daily distillation keeps up to date. Every write,
 * whichever its path, goes through writeHotMemory.
 */
export function createHotMemory(deps: MemoryDeps): HotMemoryService {
  const maxTokens = () => deps.config.hotMaxTokens;

  return {
    async get(actor, projectId) {
      await assertMemoryReader(deps, actor, projectId);
      return toView(projectId, await selectMemory(deps.db, projectId), maxTokens());
    },

    async versions(actor, projectId, options: { limit?: number } = {}) {
      await assertMemoryReader(deps, actor, projectId);
      const limit = options.limit ?? DEFAULT_VERSIONS;
      if (!Number.isInteger(limit) || limit < 1 || limit > MAX_VERSIONS) {
        throw new ClinAgentError('VALIDATION_FAILED', `limit: must be an integer from 1 to ${MAX_VERSIONS}, got ${JSON.stringify(options.limit)}.`, { field: 'limit' });
      }
      return (await selectVersions(deps.db, projectId, limit)).map(toVersionView);
    },

    async replace(actor, projectId, input) {
      await assertMemoryWriter(deps, actor, projectId);
      const { content, baseVersion } = input ?? ({} as Partial<typeof input>);
      const problems: string[] = [];
      if (typeof content !== 'string') problems.push('content: must be the markdown document as a string');
      else if (content.length > MAX_DOCUMENT_CHARS) problems.push(`content: ${content.length} characters; the hot memory is a short document (at most ${maxTokens()} tokens)`);
      if (baseVersion !== undefined && (!Number.isInteger(baseVersion) || baseVersion < 0)) problems.push('baseVersion: must be the version number you opened (0 or more)');
      if (problems.length) throw new ClinAgentError('VALIDATION_FAILED', `The hot memory cannot be saved:\n- ${problems.join('\n- ')}`, { problems });
      const parsed = parseHotMemoryMarkdown(content as string);
      const now = new Date().toISOString();
      // Lines already in the memory keep their source, author and time (writeHotMemory); these are the new ones.
      const lines = parsed.map((line) => makeLine(line.section, line.text, { kind: 'user', ref: actor.name }, actor.name, now));
      return writeHotMemory(deps, { projectId, actor: actor.name, path: 'editor', change: () => lines, baseVersion, reason: reasonText(input?.reason, 'edited in the memory editor') });
    },

    async addFacts(actor, projectId, facts, path) {
      await assertMemoryWriter(deps, actor, projectId);
      if (path !== 'chat' && path !== 'api') throw new ClinAgentError('VALIDATION_FAILED', `path: must be "chat" or "api", got ${JSON.stringify(path)}.`, { field: 'path' });
      const lines = factLines(actor, facts);
      if (path === 'chat') await assertOwnWords(deps, actor, projectId, lines);
      return writeHotMemory(deps, { projectId, actor: actor.name, path, change: (current) => [...current, ...lines], reason: path === 'chat' ? 'remembered from the chat' : 'added through the API' });
    },

    async rollback(actor, projectId, version, reason) {
      await assertMemoryWriter(deps, actor, projectId);
      const target = Number.isInteger(version) && version > 0 ? await selectVersion(deps.db, projectId, version) : undefined;
      if (!target) {
        const range = await selectVersionRange(deps.db, projectId);
        const existing = range ? `versions ${range.first} to ${range.last} exist` : 'it has no versions yet';
        throw new ClinAgentError('NOT_FOUND', `Version ${String(version)} of the hot memory of project "${projectId}" does not exist; ${existing}. The version history lists them.`, { projectId, version, ...(range ?? {}) });
      }
      // The old lines come back with their own sources; the rollback itself is a new version, so it can be undone.
      return writeHotMemory(deps, { projectId, actor: actor.name, path: 'rollback', change: () => target.lines, reason: reasonText(reason, `rolled back to version ${version}`) });
    },

    async promptBlock(projectId) {
      const content = (await selectMemory(deps.db, projectId))?.content;
      return dataBlock(HOT_MEMORY_LABEL, content || '(empty)');
    },

    distill: (projectId) => distillHotMemory(deps, projectId),

    prune: (projectId, options = {}) => pruneHotMemory(deps, projectId, options),

    projectsToDistill: () => selectProjectsToDistill(deps.db),
  };
}

/** Every problem of every fact at once, one `facts.N.field: message` line each. */
function factLines(actor: User, facts: unknown): HotMemoryLine[] {
  if (!Array.isArray(facts) || facts.length === 0 || facts.length > MAX_FACTS_PER_WRITE) {
    throw new ClinAgentError('VALIDATION_FAILED', `facts: must be a list of 1 to ${MAX_FACTS_PER_WRITE} facts, each {section, text}.`, { field: 'facts' });
  }
  const problems: string[] = [];
  const now = new Date().toISOString();
  const lines = (facts as Array<Partial<NewFact> | null>).map((fact, i) => {
    if (!isSection(fact?.section)) problems.push(`facts.${i}.section: must be preferences, state or prohibitions`);
    if (typeof fact?.text !== 'string' || !cleanText(fact.text)) problems.push(`facts.${i}.text: must be a non-empty line of text`);
    else if ([...fact.text].length > MAX_FACT_CHARS) problems.push(`facts.${i}.text: ${[...fact.text].length} characters; keep a fact under ${MAX_FACT_CHARS}`);
    if (fact?.source !== undefined && !isSource(fact.source)) problems.push(`facts.${i}.source: must be {kind: turn | record | report | feedback | user, ref: string}`);
    return makeLine(fact?.section as HotMemoryLine['section'], String(fact?.text ?? ''), fact?.source ?? { kind: 'user', ref: actor.name }, actor.name, now);
  });
  if (problems.length) throw new ClinAgentError('VALIDATION_FAILED', `The facts cannot be remembered:\n- ${problems.join('\n- ')}`, { problems });
  return lines;
}

/**
 * A fact from the chat is the model's reading of the person's message, so it is stored only when it is that
 * person's own words in the turn it cites (own-words.ts); anything else is refused whole, nothing stored. The
 * message names why without quoting the line: it reaches logs, and the trace already holds the text.
 */
async function assertOwnWords(deps: MemoryDeps, actor: User, projectId: string, lines: readonly HotMemoryLine[]): Promise<void> {
  const problems: string[] = [];
  for (const [i, line] of lines.entries()) {
    const said = line.source.kind === 'turn' ? await selectOwnUserTurn(deps.db, { projectId, userId: actor.id, ref: line.source.ref }) : undefined;
    if (said === undefined) {
      problems.push(`facts.${i}.source: must be your own message in this project's chat ({kind: "turn", ref: "<conversation id>#<seq>"})`);
      continue;
    }
    const verdict = checkOwnWords(line.text, said);
    if (!verdict.ok) problems.push(`facts.${i}.text: not your own words from that message: ${verdict.reason}`);
  }
  if (problems.length) {
    throw new ClinAgentError(
      'VALIDATION_FAILED',
      `Nothing was remembered: a line remembered from the chat must be your own words from your message.\n- ${problems.join('\n- ')}\nSay what to remember in your own words (e.g. "记住：以后汇报只要结论"), or a writer adds it in the memory editor.`,
      { field: 'facts', problems },
    );
  }
}

function reasonText(reason: unknown, fallback: string): string {
  return typeof reason === 'string' && reason.trim() ? reason.trim().slice(0, 500) : fallback;
}
