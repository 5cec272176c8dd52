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
});
export type AgentResult = z.infer<typeof AgentResult>;

/** POST /api/agent/run */
export const AgentRunRequest = z.strictObject({
  scenarioId: IdText,
  input: z.string().min(1).max(20_000),
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
    .object({ type: z.enum(['builtin', 'dify']), appMode: z.enum(['chat', 'agent']).optional().describe('dify only') })
    .describe('what runs the scenario: the built-in agent loop, or a Dify app (its prompt, tools and knowledge are set in Dify)'),
  documents: z.array(ScenarioDocument),
});
export type Scenario = z.infer<typeof Scenario>;
export const ScenarioList = z.object({ scenarios: z.array(Scenario) });

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
