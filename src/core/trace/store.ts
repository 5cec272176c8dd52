import { randomUUID } from 'node:crypto';
import { and, asc, desc, eq, inArray, or, sql, type SQL } from 'drizzle-orm';
import type { Db } from '../db/connect.js';
import { spans, traces } from '../db/schema/trace.js';
import { errorMessage } from '../errors.js';
import { isUuid } from '../ids.js';
import { createSecretRegistry, type SecretRegistry } from '../secrets.js';
import type { TokenUsage } from '../llm/types.js';

export type SpanKind = 'llm' | 'tool' | 'retrieval' | 'step';

export interface SpanOutcome {
  output?: unknown;
  usage?: TokenUsage;
  /** A call can return normally and still have failed (a tool result with success: false). */
  status?: 'success' | 'failed';
  error?: string;
}

/** What code inside a run needs: a way to time and record one step. */
export interface TraceScope {
  readonly traceId: string;
  span<T>(kind: SpanKind, name: string, input: unknown, fn: () => Promise<T>, describe?: (result: T) => SpanOutcome): Promise<T>;
}

export interface TraceRun extends TraceScope {
  /** `cancelled`: the caller stopped the run (a closed stream, the Stop button); what it did so far stays recorded. */
  finish(outcome: { status: 'success' | 'failed' | 'cancelled'; output?: unknown; error?: string }): Promise<void>;
}

/** What a trace and each of its spans have in common: a named, timed step with its tokens. */
interface StepView {
  id: string;
  kind: string;
  name: string;
  status: string;
  input: unknown;
  output: unknown;
  error: string | null;
  promptTokens: number;
  completionTokens: number;
  startedAt: string;
}

export interface SpanView extends StepView {
  durationMs: number;
}

export interface TraceView extends StepView {
  userId: string | null;
  projectId: string | null;
  endedAt: string | null;
  durationMs: number | null;
  spans: SpanView[];
}

/**
 * Who is reading traces. Traces hold whole prompts, and prompts hold record data, so a reader sees only the
 * runs they started and the runs over projects they belong to; admins (and internal callers such as tests
 * and the CLI, which already hold the database) see all.
 */
export type TraceReader = { all: true } | { all?: false; userId: string; projectIds: ReadonlyArray<string> };

export const ALL_TRACES: TraceReader = { all: true };

export interface TraceStore {
  /** `userId`: who started the run; `projectId`: the project whose data it reads. Both decide who may read it. */
  start(run: { kind: string; name: string; input?: unknown; userId?: string; projectId?: string; adminOnly?: boolean }): Promise<TraceRun>;
  /** Undefined when the trace does not exist or the reader may not see it: the two look the same. */
  get(id: string, reader: TraceReader): Promise<TraceView | undefined>;
  list(reader: TraceReader, options?: { limit?: number }): Promise<Array<Omit<TraceView, 'spans' | 'input' | 'output'>>>;
}

/** The WHERE clause of what `reader` may see; undefined means everything. */
function visibleTo(reader: TraceReader): SQL | undefined {
  if (reader.all) return undefined;
  const own = isUuid(reader.userId) ? eq(traces.userId, reader.userId) : undefined;
  const projects = reader.projectIds.length ? inArray(traces.projectId, [...reader.projectIds]) : undefined;
  // No user and no project: a condition that matches nothing, never an absent one that matches everything.
  const readable = or(own, projects) ?? sql`false`;
  // An admin-only trace (the trial assistant's thoughts and observations) is not its user's nor its project's to read.
  return and(eq(traces.adminOnly, false), readable);
}

/**
 * The one trace store. The trace row is inserted before any work starts and every span is written as soon
 * as it ends, so the audit record of a run survives the run failing or the process dying mid-way.
 * `secrets` are scrubbed from everything stored, in case a provider error message echoes a key.
 */
export function createTraceStore(db: Db, options: { secrets?: SecretRegistry | ReadonlyArray<string | undefined> } = {}): TraceStore {
  // A registry shared with the logger also masks secrets registered after start-up (a REDCap token read later).
  const secrets = Array.isArray(options.secrets) || !options.secrets ? createSecretRegistry(options.secrets as ReadonlyArray<string | undefined> | undefined) : (options.secrets as SecretRegistry);
  // Values are scrubbed as JSON text; the registry masks the JSON-escaped form of each secret as well.
  const scrub = (value: unknown): unknown => (value === undefined ? null : JSON.parse(secrets.redact(JSON.stringify(value))));

  return {
    async start(run) {
      const traceId = randomUUID();
      const startedAt = new Date();
      await db.insert(traces).values({ id: traceId, kind: run.kind, name: run.name, status: 'running', userId: isUuid(run.userId) ? run.userId : null, projectId: run.projectId ?? null, adminOnly: run.adminOnly ?? false, input: scrub(run.input), startedAt });

      // Fast steps often start in the same millisecond, so spans carry their start order explicitly.
      let nextSeq = 0;
      const scope: TraceRun = {
        traceId,
        async span(kind, name, input, fn, describe) {
          const spanStarted = new Date();
          const seq = nextSeq++;
          const t0 = performance.now();
          let outcome: SpanOutcome;
          let result: Awaited<ReturnType<typeof fn>>;
          try {
            result = await fn();
            outcome = describe ? describe(result) : { output: result };
          } catch (error) {
            await writeSpan({ status: 'failed', error: errorMessage(error) });
            throw error;
          }
          await writeSpan(outcome);
          return result;

          async function writeSpan(o: SpanOutcome) {
            await db.insert(spans).values({
              id: randomUUID(),
              traceId,
              seq,
              kind,
              name,
              status: o.status ?? (o.error ? 'failed' : 'success'),
              input: scrub(input),
              output: scrub(o.output),
              error: o.error ? secrets.redact(o.error) : null,
              promptTokens: o.usage?.promptTokens ?? 0,
              completionTokens: o.usage?.completionTokens ?? 0,
              startedAt: spanStarted,
              durationMs: Math.round(performance.now() - t0),
            });
          }
        },
        async finish(outcome) {
          const endedAt = new Date();
          const [totals] = await db
            .select({ prompt: sql<number>`coalesce(sum(${spans.promptTokens}), 0)::int`, completion: sql<number>`coalesce(sum(${spans.completionTokens}), 0)::int` })
            .from(spans)
            .where(eq(spans.traceId, traceId));
          await db
            .update(traces)
            .set({
              status: outcome.status,
              output: scrub(outcome.output),
              error: outcome.error ? secrets.redact(outcome.error) : null,
              promptTokens: Number(totals?.prompt ?? 0),
              completionTokens: Number(totals?.completion ?? 0),
              endedAt,
              durationMs: endedAt.getTime() - startedAt.getTime(),
            })
            .where(eq(traces.id, traceId));
        },
      };
      return scope;
    },

    async get(id, reader) {
      if (!isUuid(id)) return undefined;
      const [trace] = await db.select().from(traces).where(and(eq(traces.id, id), visibleTo(reader)));
      if (!trace) return undefined;
      const rows = await db.select().from(spans).where(eq(spans.traceId, id)).orderBy(asc(spans.seq));
      return {
        ...trace,
        startedAt: trace.startedAt.toISOString(),
        endedAt: trace.endedAt?.toISOString() ?? null,
        spans: rows.map((s) => ({
          id: s.id,
          kind: s.kind,
          name: s.name,
          status: s.status,
          input: s.input,
          output: s.output,
          error: s.error,
          promptTokens: s.promptTokens,
          completionTokens: s.completionTokens,
          startedAt: s.startedAt.toISOString(),
          durationMs: s.durationMs,
        })),
      };
    },

    async list(reader, { limit = 50 } = {}) {
      const rows = await db
        .select({
          id: traces.id, kind: traces.kind, name: traces.name, status: traces.status, userId: traces.userId, projectId: traces.projectId, error: traces.error,
          promptTokens: traces.promptTokens, completionTokens: traces.completionTokens, startedAt: traces.startedAt, endedAt: traces.endedAt, durationMs: traces.durationMs,
        })
        .from(traces)
        .where(visibleTo(reader))
        .orderBy(desc(traces.startedAt))
        .limit(Math.min(Math.max(limit, 1), 500));
      return rows.map((r) => ({ ...r, startedAt: r.startedAt.toISOString(), endedAt: r.endedAt?.toISOString() ?? null }));
    },
  };
}
