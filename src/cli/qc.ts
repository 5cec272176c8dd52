import { parseArgs } from 'node:util';
import cliProgress from 'cli-progress';
import { ClinAgentError } from '../core/errors.js';
import type { QcProgress } from '../trial/qc/qc-runs.js';
import { apiToken, consoleReviewUrl, createServerApi, serverUrl } from './server-api.js';

/**
 * `clinagent qc <projectId> <skillId> [--records S001,S002] [--url URL]`: runs a QC batch through the HTTP API of a
 * running server, since the server holds the embedded database and a second process must not open it. It
 * starts the run, then follows its progress until no record waits for a worker.
 */

/** Often enough that the bar moves smoothly, rare enough that a 10 000-record batch costs the server nothing. */
const POLL_INTERVAL_MS = 500;

export async function qcCommand(args: string[]): Promise<number> {
  const { positionals, values } = parseArgs({ args, allowPositionals: true, options: { records: { type: 'string' }, url: { type: 'string' } } });
  const [projectId, skillId] = positionals;
  if (!projectId || !skillId || positionals.length > 2) {
    throw new ClinAgentError('VALIDATION_FAILED', 'Usage: clinagent qc <projectId> <skillId> [--records S001,S002] [--url URL], e.g. clinagent qc demo-htn-01 demo-core-checks');
  }
  const recordIds = values.records?.split(',').map((id) => id.trim()).filter(Boolean);
  const token = apiToken('qc');
  const server = createServerApi(serverUrl(values.url), token);
  const api = <T>(method: 'GET' | 'POST', path: string, body?: unknown) => server.call<T>(method, path, body);

  const startedAt = Date.now();
  let progress = await api<QcProgress>('POST', `/api/iit/projects/${encodeURIComponent(projectId)}/qc-runs`, { skillId, ...(recordIds?.length ? { recordIds } : {}) });
  process.stdout.write(`QC run ${progress.id}: skill ${skillId} over ${progress.total} record(s) of project ${projectId}. Ctrl-C stops watching; the run goes on in the server.\n`);
  const display = createDisplay(progress.total);
  try {
    while (progress.status === 'running') {
      display.update(progress);
      await new Promise((resolve) => setTimeout(resolve, POLL_INTERVAL_MS));
      progress = await api<QcProgress>('GET', `/api/iit/qc-runs/${encodeURIComponent(progress.id)}`);
    }
    display.update(progress);
  } finally {
    display.stop();
  }
  const seconds = ((Date.now() - startedAt) / 1000).toFixed(1);
  const state = progress.status === 'waiting_review' ? 'waiting for review' : progress.status;
  process.stdout.write(`QC run ${progress.id} ${state} in ${seconds} s: ${progress.total} record(s), ${progress.completed} completed, ${progress.suspended} waiting for review, ${progress.failed} failed.\n`);
  if (progress.suspended) process.stdout.write(`Review them in the console: ${consoleReviewUrl(server.baseUrl, projectId)}\n`);
  // Every record checked with runs left for a person is a finished command: the reviews happen in the console.
  return progress.failed || (progress.status !== 'completed' && progress.status !== 'waiting_review') ? 1 : 0;
}

/** A bar on a terminal; one plain line per change elsewhere (CI logs, tests), where a bar's redraws are noise. */
function createDisplay(total: number): { update(progress: QcProgress): void; stop(): void } {
  if (process.stdout.isTTY) {
    const bar = new cliProgress.SingleBar(
      { format: 'QC {bar} {value}/{total} checked | {failed} failed | {suspended} for review | {duration_formatted}', stream: process.stdout, hideCursor: true },
      cliProgress.Presets.shades_classic,
    );
    bar.start(total, 0, { failed: 0, suspended: 0 });
    return { update: (p) => bar.update(p.done, { failed: p.failed, suspended: p.suspended }), stop: () => bar.stop() };
  }
  let last = '';
  return {
    update(p) {
      const line = `${p.done}/${p.total} checked, ${p.failed} failed, ${p.suspended} for review`;
      if (line !== last) process.stdout.write(line + '\n');
      last = line;
    },
    stop() {},
  };
}
