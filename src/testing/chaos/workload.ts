import { randomUUID } from 'node:crypto';
import { CHAOS_ANSWER_PREFIX } from './chaos-model.js';
import { ServerUnreachable, type Answer, type ChaosClient } from './chaos-client.js';
import { batchRecords, CHAOS_PROJECT, CHAOS_SKILL_ID, importForm, type SeededRecord } from './qc-batch-data.js';

/** What the server acknowledged (2xx) as saved: every entry must be found afterwards. */
export interface Ledger {
  imports: Array<{ batch: number; records: SeededRecord[] }>;
  qcRuns: Array<{ id: string; batch: number; recordIds: string[] }>;
  agentRuns: string[];
  answers: Array<{ runId: string; answer: string }>;
  consults: string[];
  consultMessages: Array<{ sessionId: string; text: string }>;
}

export interface WorkloadOptions {
  recordsPerBatch: number;
  /** Agents waiting for a person, each started, answered and finished in turn; 0 on the embedded engine. */
  patients: number;
  consults: number;
  /** How long one piece of work (a batch, a run) may take before the test fails naming it. */
  settleMs: number;
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The work a deployment does while the chaos test breaks it, each kind in its own loop, as clients over HTTP: QC
 * batches (import a batch of records, start a QC run over them, follow it to its end), agent runs that wait for a
 * person (start, answer, follow), and consults (three messages each). Unexpected answers are collected as problems
 * (the test fails on them); a server that is down is waited for.
 */
export function startWorkload(client: ChaosClient, options: WorkloadOptions) {
  const ledger: Ledger = { imports: [], qcRuns: [], agentRuns: [], answers: [], consults: [], consultMessages: [] };
  const problems: string[] = [];
  let stopping = false;
  let currentQcRun: string | undefined;
  let batchesInFlight = 0;

  const problem = (what: string, answer?: Answer) => problems.push(answer ? `${what}: ${answer.status} ${JSON.stringify(answer.body).slice(0, 300)}` : what);

  /** Polls `path` (retrying while the server is down) until `done` holds for its body, or fails naming `what`. */
  async function until(path: string, done: (body: any) => boolean, what: string): Promise<any> {
    const deadline = Date.now() + options.settleMs;
    let last: Answer | undefined;
    while (Date.now() < deadline) {
      try {
        last = await client.retrying('GET', path);
        if (last.status === 200 && done(last.body)) return last.body;
      } catch (error) {
        if (!(error instanceof ServerUnreachable)) throw error;
      }
      await pause(200);
    }
    problem(`${what} not within ${options.settleMs} ms (last: ${JSON.stringify(last?.body).slice(0, 300)})`);
    return undefined;
  }

  async function qcLoop(): Promise<void> {
    for (let batch = 1; !stopping; batch++) {
      batchesInFlight++;
      try {
        const records = batchRecords(batch, options.recordsPerBatch);
        // An import is all-or-nothing and the same file again changes nothing, so a lost answer is simply sent again.
        const imported = await client.retrying('POST', `/api/iit/projects/${CHAOS_PROJECT}/imports`, importForm(records));
        if (imported.status !== 201) {
          problem(`import of batch ${batch}`, imported);
          return;
        }
        ledger.imports.push({ batch, records });
        const recordIds = records.map((r) => r.recordId);
        const started = await client.retrying('POST', `/api/iit/projects/${CHAOS_PROJECT}/qc-runs`, { skillId: CHAOS_SKILL_ID, recordIds });
        if (started.status !== 202) {
          problem(`QC run of batch ${batch}`, started);
          return;
        }
        ledger.qcRuns.push({ id: started.body.id, batch, recordIds });
        currentQcRun = started.body.id;
        await until(`/api/iit/qc-runs/${started.body.id}`, (run) => run.status !== 'running' && run.status !== 'queued', `QC run ${started.body.id} (batch ${batch}) to finish`);
        currentQcRun = undefined;
      } finally {
        batchesInFlight--;
      }
    }
  }

  async function patientLoop(patient: number): Promise<void> {
    for (let n = 1; !stopping; n++) {
      const started = await client.retrying('POST', '/api/agent/runs', { scenarioId: 'chaos-intake', input: `I have a cough (patient ${patient}, visit ${n}).` });
      if (started.status !== 202) {
        problem(`agent run of patient ${patient}`, started);
        return;
      }
      const runId = started.body.id as string;
      ledger.agentRuns.push(runId);
      const waiting = await until(`/api/agent/runs/${runId}`, (run) => run.status === 'SUSPENDED' && run.waiting, `agent run ${runId} to wait for its answer`);
      if (!waiting) return;
      const answer = `${CHAOS_ANSWER_PREFIX}${patient}-${n}: three weeks`;
      const answered = await client.retrying('POST', `/api/agent/runs/${runId}/answer`, { answer, dataHash: waiting.waiting.dataHash });
      if (answered.status === 200) ledger.answers.push({ runId, answer });
      // 409: an attempt whose answer was lost with the server went through; the run has the answer, unacknowledged.
      else if (answered.status !== 409) problem(`answer to agent run ${runId}`, answered);
      if (!(await until(`/api/agent/runs/${runId}`, (run) => run.status === 'COMPLETED', `agent run ${runId} to complete`))) return;
    }
  }

  async function consultLoop(consult: number): Promise<void> {
    for (let n = 1; !stopping; n++) {
      const started = await client.retrying('POST', '/api/consult/sessions', { title: `Chaos consult ${consult}-${n}` });
      if (started.status !== 201) {
        problem(`consult ${consult}-${n}`, started);
        return;
      }
      const sessionId = started.body.sessionId as string;
      ledger.consults.push(sessionId);
      for (let k = 1; k <= 3 && !stopping; k++) {
        const text = `msg-${consult}-${n}-${k}: an itchy rash`;
        // One id per message, sent again with every retry: the server stores the message once however many
        // attempts reach it (a 503 or a kill may come after the message was saved), and answers a resend of an
        // answered message with the stored reply.
        const clientMessageId = randomUUID();
        const deadline = Date.now() + options.settleMs;
        for (;;) {
          let sent: Answer | undefined;
          try {
            sent = await client.send('POST', `/api/consult/sessions/${sessionId}/messages`, { message: text, clientMessageId });
          } catch (error) {
            if (!(error instanceof ServerUnreachable)) throw error;
          }
          if (sent?.status === 200) {
            ledger.consultMessages.push({ sessionId, text });
            break;
          }
          // Unreachable, the database away (503), the model away (502), or an attempt still answering (409):
          // whether the message was saved is unknown or it is still being answered; the same id again is safe.
          if ((sent === undefined || [409, 502, 503].includes(sent.status)) && Date.now() < deadline) {
            await pause(300);
            continue;
          }
          problem(`message ${text} of consult ${sessionId}`, sent ?? { status: 0, body: 'the server never answered before the deadline' });
          return;
        }
      }
    }
  }

  const loops = [
    qcLoop(),
    ...Array.from({ length: options.patients }, (_, i) => patientLoop(i + 1)),
    ...Array.from({ length: options.consults }, (_, i) => consultLoop(i + 1)),
  ].map((loop) => loop.catch((error: unknown) => problem(`a workload loop stopped: ${(error as Error).stack ?? String(error)}`)));

  return {
    ledger,
    problems,
    /** The QC run in progress, for a PostgreSQL restart in the middle of a batch. */
    currentQcRun: () => currentQcRun,
    batchesInFlight: () => batchesInFlight,
    /** Lets every loop finish the piece of work it is on (waiting for it to end), then resolves. */
    async stop(): Promise<void> {
      stopping = true;
      await Promise.all(loops);
    },
  };
}

export type Workload = ReturnType<typeof startWorkload>;
