import { ClinAgentError } from '../core/errors.js';
import type { IngestInput, RetrieveQuery, SearchScope } from './types.js';

/** Letters, digits, '_' and '-': safe to inline in SQL and in index names (see vector-sql.ts). */
const COLLECTION_NAME = /^[a-z0-9][a-z0-9_-]{0,63}$/i;
/** Wide enough for UUIDs, numeric ids and "protocol-v2.1", narrow enough to need no escaping anywhere. */
const DOCUMENT_ID = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/;
const DEFAULT_TOP_K = 5;
/** More than 50 chunks (~50k characters) would not fit a prompt anyway. */
const MAX_TOP_K = 50;
/** A chat scopes retrieval to the documents attached to it; thousands means a caller bug. */
const MAX_DOCUMENT_IDS = 1000;

const collectionProblem = (value: unknown) =>
  typeof value === 'string' && COLLECTION_NAME.test(value)
    ? undefined
    : `collection: must be 1-64 letters, digits, '_' or '-', starting with a letter or digit (e.g. "protocols"), got ${JSON.stringify(value)}`;

const documentIdProblem = (field: string, value: unknown) =>
  typeof value === 'string' && DOCUMENT_ID.test(value)
    ? undefined
    : `${field}: must be 1-128 letters, digits, '.', '_', ':' or '-', starting with a letter or digit, got ${JSON.stringify(value)}`;

const nonEmpty = (field: string, value: unknown) =>
  typeof value === 'string' && value.trim() !== '' ? undefined : `${field}: must be a non-empty string`;

function fail(what: string, problems: Array<string | undefined>): void {
  const found = problems.filter((problem): problem is string => problem !== undefined);
  if (found.length) {
    throw new ClinAgentError('VALIDATION_FAILED', `Invalid ${what}:\n- ${found.join('\n- ')}`, { problems: found });
  }
}

export function validateIngestInput(input: IngestInput): void {
  fail('document to ingest', [
    input.documentId === undefined ? undefined : documentIdProblem('documentId', input.documentId),
    nonEmpty('scenarioId', input.scenarioId),
    nonEmpty('sourceFile', input.sourceFile),
    typeof input.text === 'string' ? undefined : 'text: must be a string',
    collectionProblem(input.collection),
  ]);
}

export function validateRetrieveQuery(query: RetrieveQuery): number {
  const topK = query.topK ?? DEFAULT_TOP_K;
  fail('retrieval query', [
    nonEmpty('scenarioId', query.scenarioId),
    nonEmpty('query', query.query),
    collectionProblem(query.collection),
    Number.isInteger(topK) && topK >= 1 && topK <= MAX_TOP_K ? undefined : `topK: must be a whole number from 1 to ${MAX_TOP_K}, got ${String(query.topK)}`,
    ...documentIdsProblems(query.documentIds),
  ]);
  return topK;
}

function documentIdsProblems(ids: unknown): Array<string | undefined> {
  if (ids === undefined) return [];
  if (!Array.isArray(ids)) return ['documentIds: must be an array of document ids'];
  if (ids.length > MAX_DOCUMENT_IDS) return [`documentIds: at most ${MAX_DOCUMENT_IDS} ids, got ${ids.length}`];
  return ids.map((id, i) => documentIdProblem(`documentIds.${i}`, id));
}

export function validateScope(scope: SearchScope): void {
  fail('search scope', [nonEmpty('scenarioId', scope.scenarioId), collectionProblem(scope.collection)]);
}
