import { z } from 'zod';

const step = {
  id: z.string(),
  kind: z.string().describe('a trace: agent or sop; a span: llm, tool, retrieval or step'),
  name: z.string(),
  status: z.string(),
  error: z.string().nullable(),
  promptTokens: z.int(),
  completionTokens: z.int(),
  startedAt: z.string(),
};

/** One LLM call, tool call or retrieval of a run, with its timing and tokens. */
export const TraceSpan = z.object({ ...step, input: z.unknown(), output: z.unknown(), durationMs: z.int() });
export type TraceSpan = z.infer<typeof TraceSpan>;

/** A run as trace lists show it. */
export const TraceSummary = z.object({
  ...step,
  userId: z.string().nullable().describe('who started the run'),
  projectId: z.string().nullable().describe('the project whose data the run read'),
  endedAt: z.string().nullable(),
  durationMs: z.int().nullable(),
  contentWithheld: z.boolean().optional().describe("true: another user's private conversation (consult, Protocol Agent); input, output and errors are left out, timings, tokens and status shown"),
});
export type TraceSummary = z.infer<typeof TraceSummary>;
export const TraceList = z.object({ traces: z.array(TraceSummary) });

/** GET /api/traces/:id: the run with every span. */
export const Trace = TraceSummary.extend({ input: z.unknown(), output: z.unknown(), spans: z.array(TraceSpan) });
export type Trace = z.infer<typeof Trace>;

/** GET /api/traces */
export const TraceListQuery = z.object({ limit: z.int().min(1).max(500).default(50) });
