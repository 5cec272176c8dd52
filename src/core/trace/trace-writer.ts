import { sql } from 'drizzle-orm';
import type { Db } from '../db/connect.js';
import { errorMessage } from '../errors.js';
import type { Logger } from '../logger.js';
import type { SecretRegistry } from '../secrets.js';

/**
 * A value as JSON text, taken when the step ended (the caller may change the object afterwards), and only
 * scrubbed of secrets and parsed by the database when the batch is written, off the request path.
 */
export type JsonText = string | undefined;

interface TraceRowInput {
  id: string;
  kind: string;
  name: string;
  userId: string | null;
  projectId: string | null;
  adminOnly: boolean;
  input: JsonText;
  startedAt: Date;
}

interface SpanRowInput {
  id: string;
  traceId: string;
  seq: number;
  kind: 'llm' | 'tool' | 'retrieval' | 'step';
  name: string;
  status: 'success' | 'failed';
  input: JsonText;
  output: JsonText;
  error: string | null;
  promptTokens: number;
  completionTokens: number;
  startedAt: Date;
  durationMs: number;
}

interface TraceEnd {
  status: 'success' | 'failed' | 'cancelled';
  output: JsonText;
  error: string | null;
  promptTokens: number;
  completionTokens: number;
  endedAt: Date;
  durationMs: number;
}

export interface TraceWriterOptions {
  secrets: SecretRegistry;
  logger?: Logger;
  /**
   * How long a written step may wait in memory before a timer writes it: what a process killed mid-run can lose.
   * 500 ms keeps that window well under a second while a busy server still writes dozens of steps per statement.
   */
  scheduledDelayMs?: number;
  /** A batch of this many writes goes at once, before its timer: one multi-row INSERT stays small. */
  maxExportBatchSize?: number;
  /**
   * Above this many queued writes a new step waits for a batch to be written (back-pressure) instead of being
   * dropped: an audit record with holes is worse than a run slowed down while the database catches up.
   */
  maxQueueSize?: number;
}

interface TraceWriter {
  /** Each returns undefined at once, or, when the queue is full, a promise of room (back-pressure). */
  startTrace(row: TraceRowInput): Promise<void> | undefined;
  addSpan(row: SpanRowInput): Promise<void> | undefined;
  endTrace(id: string, end: TraceEnd): Promise<void> | undefined;
  /** Writes everything queued so far; never rejects (a failed write is logged). */
  flush(): Promise<void>;
  /** Stops the timer and writes what is left: nothing queued before `close()` is lost. */
  close(): Promise<void>;
  /** Queued writes not yet written, and writes that failed and were logged since start-up. */
  readonly stats: { readonly queued: number; readonly failed: number };
}

type Op =
  | { kind: 'trace'; row: TraceRowInput; end?: TraceEnd }
  | { kind: 'span'; row: SpanRowInput }
  | { kind: 'end'; id: string; end: TraceEnd };

/**
 * Writes traces and spans in batches, as OpenTelemetry's BatchSpanProcessor does: a step that ends is queued,
 * and a timer (scheduledDelayMs) or a full batch (maxExportBatchSize) writes the queue in a few multi-row
 * statements, so neither a model round nor the end of a run waits for an INSERT. A trace whose insert is still
 * queued when its run ends is written with its end in one row. Readers call `flush()` first, and `close()`
 * drains the queue on shutdown.
 */
export function createTraceWriter(db: Db, options: TraceWriterOptions): TraceWriter {
  const scheduledDelayMs = options.scheduledDelayMs ?? 500;
  const maxExportBatchSize = options.maxExportBatchSize ?? 128;
  const maxQueueSize = options.maxQueueSize ?? 2048;
  const { secrets, logger } = options;

  let queue: Op[] = [];
  // Traces whose insert is still queued: their end is merged into that insert instead of a second statement.
  const queuedStarts = new Map<string, Extract<Op, { kind: 'trace' }>>();
  let timer: NodeJS.Timeout | undefined;
  let draining: Promise<void> | undefined;
  let failed = 0;

  function enqueue(op: Op): Promise<void> | undefined {
    queue.push(op);
    if (queue.length >= maxQueueSize) return flush();
    // A drain in progress takes what is queued before it ends; only an idle writer needs starting.
    if (queue.length >= maxExportBatchSize) {
      if (!draining) void flush();
    } else if (!timer) {
      timer = setTimeout(() => void flush(), scheduledDelayMs);
      // A pending batch must not keep a CLI command alive; close() writes it on the way out.
      timer.unref();
    }
    return undefined;
  }

  function flush(): Promise<void> {
    clearTimeout(timer);
    timer = undefined;
    // Joining a drain that is about to end would miss what was queued after its last look at the queue.
    if (draining) return draining.then(() => (queue.length ? flush() : undefined));
    if (!queue.length) return Promise.resolve();
    draining = drain().finally(() => {
      draining = undefined;
    });
    return draining;
  }

  async function drain(): Promise<void> {
    while (queue.length) {
      const batch = queue.slice(0, maxExportBatchSize);
      queue = queue.slice(batch.length);
      for (const op of batch) if (op.kind === 'trace') queuedStarts.delete(op.row.id);
      try {
        await writeBatch(batch);
      } catch (error) {
        // writeBatch reports each failed statement itself; this is a fault before any statement (a bad value).
        failed += batch.length;
        logger?.error({ error: secrets.redact(errorMessage(error)), failedWrites: failed }, `could not write a batch of ${batch.length} trace writes; the runs went on without them`);
      }
    }
  }

  /** Traces first (spans refer to them), then spans, then the ends of traces written by an earlier batch. */
  async function writeBatch(batch: Op[]): Promise<void> {
    const traceOps = batch.filter((op): op is Extract<Op, { kind: 'trace' }> => op.kind === 'trace');
    const spanRows = batch.flatMap((op) => (op.kind === 'span' ? [op.row] : []));
    if (traceOps.length) await insertAll('trace', traceOps, (op) => op.row.id, insertTraces);
    if (spanRows.length) await insertAll('span', spanRows, (row) => row.traceId, insertSpans);
    for (const op of batch) {
      if (op.kind === 'end') await attempt('trace end', op.id, () => updateEnd(op.id, op.end));
    }
  }

  /** One statement for the batch; when it fails, row by row, so one bad row costs only itself. */
  async function insertAll<R>(what: string, rows: R[], traceIdOf: (row: R) => string, insert: (rows: R[]) => PromiseLike<unknown>): Promise<void> {
    if (rows.length === 1) return attempt(what, traceIdOf(rows[0]!), () => insert(rows));
    try {
      await insert(rows);
    } catch {
      for (const row of rows) await attempt(what, traceIdOf(row), () => insert([row]));
    }
  }

  // The run that produced the write has moved on: a write that fails is the log's to report, never the run's.
  async function attempt(what: string, traceId: string, write: () => PromiseLike<unknown>): Promise<void> {
    try {
      await write();
    } catch (error) {
      failed++;
      logger?.error({ traceId, error: secrets.redact(errorMessage(error)), failedWrites: failed }, `could not write a ${what} of trace ${traceId}; the run went on without it`);
    }
  }

  /*
   * A batch goes to the database as one JSON parameter that it unpacks with jsonb_to_recordset: the steps' JSON
   * texts are spliced in as they are (never parsed and built again on our thread) once their secrets are masked,
   * and the statement is the same whatever the batch size.
   */
  const jsonOrNull = (text: JsonText): string => (text === undefined ? 'null' : secrets.redact(text));
  const str = (value: string | null): string => (value === null ? 'null' : JSON.stringify(value));
  const redactedStr = (value: string | null): string => (value === null ? 'null' : JSON.stringify(secrets.redact(value)));

  function insertTraces(ops: Array<Extract<Op, { kind: 'trace' }>>): PromiseLike<unknown> {
    const rows = ops.map(({ row, end }) =>
      `{"id":"${row.id}","kind":${str(row.kind)},"name":${str(row.name)},"user_id":${str(row.userId)},"project_id":${str(row.projectId)},"admin_only":${row.adminOnly},"input":${jsonOrNull(row.input)},"started_at":"${row.startedAt.toISOString()}",${end ? endFields(end) : '"status":"running","prompt_tokens":0,"completion_tokens":0'}}`,
    );
    return db.execute(sql`INSERT INTO traces (id, kind, name, status, user_id, project_id, admin_only, input, output, error, prompt_tokens, completion_tokens, started_at, ended_at, duration_ms)
      SELECT id, kind, name, status, user_id, project_id, admin_only, input, output, error, prompt_tokens, completion_tokens, started_at, ended_at, duration_ms
      FROM jsonb_to_recordset(${`[${rows.join(',')}]`}::jsonb) AS r(id uuid, kind text, name text, status text, user_id uuid, project_id text, admin_only boolean, input jsonb, output jsonb, error text, prompt_tokens integer, completion_tokens integer, started_at timestamptz, ended_at timestamptz, duration_ms integer)`);
  }

  function insertSpans(rows: SpanRowInput[]): PromiseLike<unknown> {
    const json = rows.map(
      (row) =>
        `{"id":"${row.id}","trace_id":"${row.traceId}","seq":${row.seq},"kind":"${row.kind}","name":${str(row.name)},"status":"${row.status}","input":${jsonOrNull(row.input)},"output":${jsonOrNull(row.output)},"error":${redactedStr(row.error)},"prompt_tokens":${row.promptTokens},"completion_tokens":${row.completionTokens},"started_at":"${row.startedAt.toISOString()}","duration_ms":${row.durationMs}}`,
    );
    return db.execute(sql`INSERT INTO spans (id, trace_id, seq, kind, name, status, input, output, error, prompt_tokens, completion_tokens, started_at, duration_ms)
      SELECT id, trace_id, seq, kind, name, status, input, output, error, prompt_tokens, completion_tokens, started_at, duration_ms
      FROM jsonb_to_recordset(${`[${json.join(',')}]`}::jsonb) AS r(id uuid, trace_id uuid, seq integer, kind text, name text, status text, input jsonb, output jsonb, error text, prompt_tokens integer, completion_tokens integer, started_at timestamptz, duration_ms integer)`);
  }

  function endFields(end: TraceEnd): string {
    return `"status":"${end.status}","output":${jsonOrNull(end.output)},"error":${redactedStr(end.error)},"prompt_tokens":${end.promptTokens},"completion_tokens":${end.completionTokens},"ended_at":"${end.endedAt.toISOString()}","duration_ms":${end.durationMs}`;
  }

  function updateEnd(id: string, end: TraceEnd): PromiseLike<unknown> {
    return db.execute(sql`UPDATE traces SET status = r.status, output = r.output, error = r.error, prompt_tokens = r.prompt_tokens, completion_tokens = r.completion_tokens, ended_at = r.ended_at, duration_ms = r.duration_ms
      FROM jsonb_to_record(${`{${endFields(end)}}`}::jsonb) AS r(status text, output jsonb, error text, prompt_tokens integer, completion_tokens integer, ended_at timestamptz, duration_ms integer)
      WHERE traces.id = ${id}::uuid`);
  }

  return {
    startTrace(row) {
      const op = { kind: 'trace' as const, row };
      queuedStarts.set(row.id, op);
      return enqueue(op);
    },
    addSpan(row) {
      return enqueue({ kind: 'span', row });
    },
    endTrace(id, end) {
      const queuedStart = queuedStarts.get(id);
      if (!queuedStart) return enqueue({ kind: 'end', id, end });
      queuedStart.end = end;
      return undefined;
    },
    flush,
    async close() {
      await flush();
    },
    get stats() {
      return { queued: queue.length, failed };
    },
  };
}
