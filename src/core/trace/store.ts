import { randomUUID } from 'node:crypto';
import { and, asc, desc, eq, inArray, notInArray, or, sql, type SQL } from 'drizzle-orm';
import type { Db } from '../db/connect.js';
import { spans, traces } from '../db/schema/trace.js';
import { errorMessage } from '../errors.js';
import { isUuid } from '../ids.js';
import { createSecretRegistry, type SecretRegistry } from '../secrets.js';
import type { TokenUsage } from '../llm/types.js';
import { createTraceWriter, type JsonText, type TraceWriterOptions } from './trace-writer.js';

export type SpanKind = 'llm' | 'tool' | 'retrieval' | 'step';

export interface SpanOutcome {
  output?: unknown;
  usage?: TokenUsage;
  /** A call can return normally and still have failed (a tool result with success: false). */
  status?: 'success' | 'failed';
  error?: string;
}

/**
 * Where runs also go as they happen, beside the tables: the OpenTelemetry export (core/telemetry/), when configured.
 * Told of each run, step and end as the store records them; its methods never throw and never wait on the network.
 */
export interface TraceExportSink {
  startRun(run: { traceId: string; kind: string; name: string; input: unknown; startedAt: Date }): ExportedRun;
}

export interface ExportedRun {
  startStep(kind: SpanKind, name: string, input: unknown, startedAt: Date): ExportedStep;
  end(outcome: { status: 'success' | 'failed' | 'cancelled'; output?: unknown; error?: string; promptTokens: number; completionTokens: number; endedAt: Date }): void;
}

export interface ExportedStep {
  /** Runs `fn` with this step as the parent of the steps started inside it. */
  within<T>(fn: () => Promise<T>): Promise<T>;
  /** `thrown`: what `fn` threw, when it did (its type names the failure). */
  end(outcome: SpanOutcome, endedAt: Date, thrown?: unknown): void;
}

/** What code inside a run needs: a way to time and record one step. */
export interface TraceScope {
  readonly traceId: string;
  span<T>(kind: SpanKind, name: string, input: unknown, fn: () => Promise<T>, describe?: (result: T) => SpanOutcome): Promise<T>;
}

export interface TraceRun extends TraceScope {
  /**
   * `cancelled`: the caller stopped the run (a closed stream, the Stop button); what it did so far stays recorded.
   * Queues the end with the spans and returns: `get`/`list` see it at once, the tables after the next batch
   * (`flush()` to write it now).
   */
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

interface SpanView extends StepView {
  durationMs: number;
}

export interface TraceView extends StepView {
  userId: string | null;
  /** True when the run is someone else's private conversation: timings, tokens and status only (see privateTraceView). */
  contentWithheld?: boolean;
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
export type TraceReader = { all: true; userId?: string } | { all?: false; userId: string; projectIds: ReadonlyArray<string> };

/**
 * Trace kinds of private conversations: a consult and a Protocol Agent conversation are their owner's (anyone else,
 * an admin included, gets 404 on the conversation itself), so their traces are too. An admin still sees that they
 * ran, how long and how many tokens, without what was said; a project member who is not the owner sees nothing.
 */
const PRIVATE_TRACE_KINDS: ReadonlySet<string> = new Set(['consult', 'staged_agent']);

/** Internal readers (tests, the CLI) that already hold the database: every trace with its content. */
export const ALL_TRACES: TraceReader = { all: true };

/** An admin: every trace, but another user's private conversation without its content. */
export const adminReader = (userId: string): TraceReader => ({ all: true, userId });

export interface TraceStore {
  /** `userId`: who started the run; `projectId`: the project whose data it reads. Both decide who may read it. */
  start(run: { kind: string; name: string; input?: unknown; userId?: string; projectId?: string; adminOnly?: boolean }): Promise<TraceRun>;
  /** Undefined when the trace does not exist or the reader may not see it: the two look the same. */
  get(id: string, reader: TraceReader): Promise<TraceView | undefined>;
  list(reader: TraceReader, options?: { limit?: number }): Promise<Array<Omit<TraceView, 'spans' | 'input' | 'output'>>>;
  /** Writes every queued trace, span and end now (a reader in another process, a test reading the tables). */
  flush(): Promise<void>;
  /** Writes what is queued and stops the timer; call it before closing the database (SIGTERM, tests). */
  close(): Promise<void>;
  /** Writes queued and writes that failed (logged) since start-up. */
  readonly stats: { readonly queued: number; readonly failed: number };
}

/** The WHERE clause of what `reader` may see; undefined means everything. */
function visibleTo(reader: TraceReader): SQL | undefined {
  if (reader.all) return undefined;
  const own = isUuid(reader.userId) ? eq(traces.userId, reader.userId) : undefined;
  // A project member reads the project's runs, not a member's private conversation that happened to name the project.
  const projects = reader.projectIds.length ? and(inArray(traces.projectId, [...reader.projectIds]), notInArray(traces.kind, [...PRIVATE_TRACE_KINDS])) : undefined;
  // No user and no project: a condition that matches nothing, never an absent one that matches everything.
  const readable = or(own, projects) ?? sql`false`;
  // An admin-only trace (the trial assistant's thoughts and observations) is not its user's nor its project's to read.
  return and(eq(traces.adminOnly, false), readable);
}

/** Whether `reader` sees only the outline of this trace: another user's private conversation, read by an admin. */
function withholdsContent(trace: { kind: string; userId: string | null }, reader: TraceReader): boolean {
  return PRIVATE_TRACE_KINDS.has(trace.kind) && reader.userId !== undefined && trace.userId !== reader.userId;
}

/** What runs need to size the trace writer; the defaults suit a server (see TraceWriterOptions). */
interface TraceStoreOptions extends Omit<TraceWriterOptions, 'secrets'> {
  secrets?: SecretRegistry | ReadonlyArray<string | undefined>;
  /** Also sends every run, step and end there (OpenTelemetry); absent, nothing more is done. */
  exporter?: TraceExportSink;
}

/** The JSON text of a value as it is now; the writer masks secrets in it later, off the request path. */
const jsonText = (value: unknown): JsonText => (value === undefined ? undefined : JSON.stringify(value));

/**
 * The one trace store. Runs hand their trace, spans and end to a batch writer (trace-writer.ts) and go on: no
 * model round or run end waits for the database. Readers here flush first, so they see every span of a running
 * or just finished trace; a reader in another process sees it within scheduledDelayMs. A process killed mid-run
 * loses at most its last scheduledDelayMs of steps; a clean shutdown (`close()`, called by closeContext on
 * SIGTERM) loses none.
 * `secrets` are scrubbed from everything stored, in case a provider error message echoes a key.
 */
export function createTraceStore(db: Db, options: TraceStoreOptions = {}): TraceStore {
  // A registry shared with the logger also masks secrets registered after start-up (a REDCap token read later).
  const secrets = Array.isArray(options.secrets) || !options.secrets ? createSecretRegistry(options.secrets as ReadonlyArray<string | undefined> | undefined) : (options.secrets as SecretRegistry);
  const writer = createTraceWriter(db, { ...options, secrets });

  return {
    async start(run) {
      const traceId = randomUUID();
      const startedAt = new Date();
      await writer.startTrace({ id: traceId, kind: run.kind, name: run.name, userId: isUuid(run.userId) ? run.userId : null, projectId: run.projectId ?? null, adminOnly: run.adminOnly ?? false, input: jsonText(run.input), startedAt });
      const exported = options.exporter?.startRun({ traceId, kind: run.kind, name: run.name, input: run.input, startedAt });

      // Fast steps often start in the same millisecond, so spans carry their start order explicitly.
      let nextSeq = 0;
      // Summed here rather than read back from the spans: finishing costs no query.
      let promptTokens = 0;
      let completionTokens = 0;
      const scope: TraceRun = {
        traceId,
        async span(kind, name, input, fn, describe) {
          const spanStarted = new Date();
          const seq = nextSeq++;
          const t0 = performance.now();
          const exportedStep = exported?.startStep(kind, name, input, spanStarted);
          let outcome: SpanOutcome;
          let result: Awaited<ReturnType<typeof fn>>;
          try {
            result = await (exportedStep ? exportedStep.within(fn) : fn());
            outcome = describe ? describe(result) : { output: result };
          } catch (error) {
            await recordSpan({ status: 'failed', error: errorMessage(error) }, error);
            throw error;
          }
          await recordSpan(outcome);
          return result;

          function recordSpan(o: SpanOutcome, thrown?: unknown): Promise<void> | undefined {
            exportedStep?.end(o, new Date(), thrown);
            promptTokens += o.usage?.promptTokens ?? 0;
            completionTokens += o.usage?.completionTokens ?? 0;
            return writer.addSpan({
              id: randomUUID(),
              traceId,
              seq,
              kind,
              name,
              status: o.status ?? (o.error ? 'failed' : 'success'),
              input: jsonText(input),
              output: jsonText(o.output),
              error: o.error ?? null,
              promptTokens: o.usage?.promptTokens ?? 0,
              completionTokens: o.usage?.completionTokens ?? 0,
              startedAt: spanStarted,
              durationMs: Math.round(performance.now() - t0),
            });
          }
        },
        async finish(outcome) {
          const endedAt = new Date();
          exported?.end({ status: outcome.status, output: outcome.output, error: outcome.error, promptTokens, completionTokens, endedAt });
          await writer.endTrace(traceId, {
            status: outcome.status,
            output: jsonText(outcome.output),
            error: outcome.error ?? null,
            promptTokens,
            completionTokens,
            endedAt,
            durationMs: endedAt.getTime() - startedAt.getTime(),
          });
        },
      };
      return scope;
    },

    async get(id, reader) {
      if (!isUuid(id)) return undefined;
      await writer.flush();
      const [trace] = await db.select().from(traces).where(and(eq(traces.id, id), visibleTo(reader)));
      if (!trace) return undefined;
      const rows = await db.select().from(spans).where(eq(spans.traceId, id)).orderBy(asc(spans.seq));
      // Messages, tool arguments and results, outputs and error texts are all what was said: none of it is shown.
      const withheld = withholdsContent(trace, reader);
      const content = <T>(value: T): T | null => (withheld ? null : value);
      return {
        ...trace,
        input: content(trace.input),
        output: content(trace.output),
        error: content(trace.error),
        ...(withheld ? { contentWithheld: true } : {}),
        startedAt: trace.startedAt.toISOString(),
        endedAt: trace.endedAt?.toISOString() ?? null,
        spans: rows.map((s) => ({
          id: s.id,
          kind: s.kind,
          name: s.name,
          status: s.status,
          input: content(s.input),
          output: content(s.output),
          error: content(s.error),
          promptTokens: s.promptTokens,
          completionTokens: s.completionTokens,
          startedAt: s.startedAt.toISOString(),
          durationMs: s.durationMs,
        })),
      };
    },

    async list(reader, { limit = 50 } = {}) {
      await writer.flush();
      const rows = await db
        .select({
          id: traces.id, kind: traces.kind, name: traces.name, status: traces.status, userId: traces.userId, projectId: traces.projectId, error: traces.error,
          promptTokens: traces.promptTokens, completionTokens: traces.completionTokens, startedAt: traces.startedAt, endedAt: traces.endedAt, durationMs: traces.durationMs,
        })
        .from(traces)
        .where(visibleTo(reader))
        .orderBy(desc(traces.startedAt))
        .limit(Math.min(Math.max(limit, 1), 500));
      return rows.map((r) => ({
        ...r,
        ...(withholdsContent(r, reader) ? { error: null, contentWithheld: true } : {}),
        startedAt: r.startedAt.toISOString(),
        endedAt: r.endedAt?.toISOString() ?? null,
      }));
    },

    flush: () => writer.flush(),
    close: () => writer.close(),
    get stats() {
      return writer.stats;
    },
  };
}
