import { z } from 'zod';
import { IdText, NameText, OpenObject, Uuid } from './common.js';

/** A retrieved excerpt an answer may cite. */
export const Reference = z.object({
  documentId: z.string(),
  scenarioId: z.string(),
  collection: z.string(),
  sourceFile: z.string(),
  chunkId: z.string().describe('`${documentId}#${chunkIndex}`'),
  chunkIndex: z.int(),
  content: z.string(),
  score: z.number().describe('cosine similarity: 1 is identical, 0 unrelated'),
});
export type Reference = z.infer<typeof Reference>;

/** One tool call of a run, as the tool registry returned it. */
export const ToolCall = z.object({
  toolName: z.string(),
  success: z.boolean(),
  arguments: z.unknown(),
  result: z.unknown(),
  error: z.string(),
});
export type ToolCall = z.infer<typeof ToolCall>;

/** A file a Dify app's tool produced during the run (its `message_file` events). */
const AgentFile = z.object({
  id: z.string(),
  type: z.string().describe('image, document, audio, video or custom, as the app says'),
  url: z.string().describe("where to fetch it; a path Dify gave is resolved against the app's host"),
  belongsTo: z.string().describe('user or assistant'),
});
type AgentFile = z.infer<typeof AgentFile>;

/** The one result of an agent run: every field is always present, whether the run succeeded or not. */
export const AgentResult = z.object({
  answer: z.string(),
  structuredOutput: OpenObject,
  references: z.array(Reference),
  toolCalls: z.array(ToolCall),
  rawOutput: z.string(),
  modelName: z.string(),
  latencyMs: z.int(),
  status: z.enum(['success', 'failed', 'cancelled']).describe('`cancelled`: the caller stopped the run'),
  error: z.string().describe("why the run failed; on a successful run, the structured-output parse error if there was one"),
  traceId: z.string().describe('the trace that records this run (GET /api/traces/:id)'),
  conversationId: z.string().nullable().describe('the conversation this turn was logged in; send it back as conversationId to continue'),
  files: z.array(AgentFile).describe('files the run produced (a Dify app\'s tools); empty for the built-in engine'),
});
export type AgentResult = z.infer<typeof AgentResult>;

/**
 * The start-form values of a Dify app (its text, number, select and checkbox variables), by variable name. The
 * limits are Dify's variable names and generous sizes: a form value is a word or a paragraph, not a document.
 */
export const DIFY_INPUT_LIMITS = { variables: 50, textChars: 20_000 } as const;
export const DifyVariableName = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]{0,63}$/, 'must be a Dify variable name: letters, digits and _, not starting with a digit, at most 64');
export const DifyInputValue = z.union([z.string().max(DIFY_INPUT_LIMITS.textChars), z.number(), z.boolean()], { message: `must be text (at most ${DIFY_INPUT_LIMITS.textChars} characters), a number or true/false` });
/**
 * A value as a request carries it. Its JSON Schema is one `type` list rather than zod's `anyOf`: Fastify's ajv
 * coerces types, and inside an `anyOf` it would turn the number 3 into the text "3" at the string branch (which a
 * Dify number variable refuses); with a list, a value of any listed type passes unchanged.
 */
const DifyInputWireValue = z
  .unknown()
  .meta({ type: ['string', 'number', 'boolean'], maxLength: DIFY_INPUT_LIMITS.textChars }) as unknown as z.ZodType<z.infer<typeof DifyInputValue>>;
// Names are checked by the engine, whose 400 names each bad one (ajv's propertyNames error names none).
const DifyInputs = z
  .record(z.string().describe('a Dify variable name: letters, digits and _, not starting with a digit, at most 64'), DifyInputWireValue)
  .meta({ maxProperties: DIFY_INPUT_LIMITS.variables })
  .describe(`start-form values by variable name: text (at most ${DIFY_INPUT_LIMITS.textChars} characters), a number or true/false; at most ${DIFY_INPUT_LIMITS.variables}`);

/** POST /api/agent/run */
export const AgentRunRequest = z.strictObject({
  scenarioId: IdText,
  input: z.string().min(1).max(20_000),
  inputs: DifyInputs.optional().describe("Dify scenarios only: start-form values of the app, merged over the scenario's engine.inputs"),
  conversationId: Uuid.optional().describe('continue this conversation (yours); omitted: a new conversation is started'),
  options: z
    .strictObject({ documentIds: z.array(z.string().max(128)).max(200).optional().describe("omitted: all of the scenario's documents") })
    .optional(),
});
export type AgentRunRequest = z.infer<typeof AgentRunRequest>;

/** A document ingested for a scenario. */
export const DocumentInfo = z.object({
  documentId: z.string(),
  scenarioId: z.string(),
  collection: z.string(),
  sourceFile: z.string(),
  chunkCount: z.int(),
  contentHash: z.string().describe('sha256 of the ingested text, hex'),
  updatedAt: z.string(),
});
export type DocumentInfo = z.infer<typeof DocumentInfo>;
export const DocumentList = z.object({ documents: z.array(DocumentInfo) });

export const ScenarioDocument = DocumentInfo.pick({ documentId: true, sourceFile: true, chunkCount: true });
export type ScenarioDocument = z.infer<typeof ScenarioDocument>;

/** A scenario this server runs, with its ingested documents (GET /api/scenarios). */
export const Scenario = z.object({
  id: z.string(),
  name: z.string(),
  description: z.string(),
  rag: z.object({ enabled: z.boolean(), collection: z.string(), topK: z.int() }),
  tools: z.array(z.string()),
  outputType: z.string(),
  engine: z
    .object({
      type: z.enum(['builtin', 'dify', 'openai-agents']),
      appMode: z.enum(['chat', 'agent', 'completion', 'workflow']).optional().describe('dify only'),
      host: z.string().optional().describe("dify only: the host of the app's API (never its key variable)"),
      inputNames: z.array(z.string()).optional().describe('dify only: start-form variables the scenario fills in itself (engine.inputs); a run may override them'),
    })
    .describe('what runs the scenario: the built-in agent loop, or a Dify app (its prompt, tools and knowledge are set in Dify)'),
  documents: z.array(ScenarioDocument),
});
export type Scenario = z.infer<typeof Scenario>;
/** A scenario file the server could not load: it is not served, and running it answers 422 with these problems. */
export const InvalidScenario = z.object({
  file: z.string().describe("the file's name in the scenarios folder"),
  id: z.string().nullable().describe('the id the file declares, when it declares one'),
  problems: z.array(z.string()).describe('every problem, one `field: reason` line each'),
});
export type InvalidScenario = z.infer<typeof InvalidScenario>;
export const ScenarioList = z.object({
  scenarios: z.array(Scenario),
  invalid: z.array(InvalidScenario).describe('scenario files that did not load (fix the file and restart the server); admins only, empty for others, as a problem may quote the file'),
});

/** GET /api/rag/documents */
export const DocumentListQuery = z.strictObject({ scenarioId: NameText.optional() });

/**
 * POST /api/rag/documents, as JSON {scenarioId, sourceFile, text, documentId?} or multipart (scenarioId,
 * documentId?, file). The server reads a multipart file part as an object `{ filename, data }`.
 */
export const IngestDocumentRequest = z.strictObject({
  scenarioId: IdText,
  documentId: z.string().regex(/^[A-Za-z0-9._-]{1,128}$/).optional(),
  sourceFile: z.string().min(1).max(255).optional(),
  text: z.string().min(1).optional(),
  file: z.object({}).optional().describe('multipart only: the file (.txt .md .pdf)'),
});
export const IngestDocumentResponse = z.object({
  documentId: z.string(),
  chunks: z.int(),
  unchanged: z.boolean().describe('true when the text matched the stored content hash, so nothing was re-embedded'),
});
export type IngestDocumentResponse = z.infer<typeof IngestDocumentResponse>;

/** GET /api/rag/search-index */
export const SearchIndexQuery = z.strictObject({ scenarioId: IdText });
/**
 * Where a scenario's search index stands. The background ingest job builds and extends it; searches never wait
 * for it and are complete in every state (chunks outside the index are compared exactly).
 */
export const SearchIndexStatus = z.object({
  scenarioId: z.string(),
  collection: z.string(),
  chunks: z.int().describe("the scenario's chunks in its collection"),
  indexedChunks: z.int().describe('chunks the index holds'),
  percent: z.int().describe('indexedChunks as a whole percentage of chunks'),
  state: z.enum(['none', 'extending', 'ready']).describe('none: no index (below indexFromChunks, or not built yet); extending: the ingest job is adding chunks; ready: every chunk indexed'),
  search: z.enum(['exact', 'index']).describe('how queries are answered now'),
  index: z
    .enum(['in-process', 'pgvector'])
    .describe("where the index lives: in-process, a graph in the server's memory (the embedded database; rebuilt in the background after every start), or pgvector, an HNSW index in the database (a server database)"),
  indexFromChunks: z.int().describe('the scope size from which a scenario gets an index'),
});
export type SearchIndexStatus = z.infer<typeof SearchIndexStatus>;
