import { z } from 'zod';
import type { Db } from '../db/connect.js';
import { ClinAgentError, errorMessage } from '../errors.js';
import type { Jobs } from '../jobs/boss.js';
import { defineQueue } from '../jobs/queues.js';
import type { Logger } from '../logger.js';
import { anchorAuditChains, type AuditAnchors } from './audit-anchor.js';

/** The cron target (AUDIT_ANCHOR_CRON): one schedule per queue in pg-boss 10, with an empty payload. */
export const auditAnchorQueue = defineQueue('audit-anchor', z.object({}).strict(), { expireInSeconds: 5 * 60 });

/** A webhook that does not answer in this time fails this attempt; pg-boss retries the job with backoff. */
const WEBHOOK_TIMEOUT_MS = 10_000;

interface AuditAnchorJobDeps {
  jobs: Jobs;
  db: Db;
  logger: Logger;
  /** REVIEW_WEBHOOK_URL and AUDIT_ANCHOR_CRON; both needed for anything to be posted. */
  webhookUrl?: string;
  cron?: string;
  fetch?: typeof fetch;
}

/**
 * Posts the audit chains' heads to the review webhook on a schedule, so a copy outside this server shows later
 * that the newest entries were deleted (docs/audit-trail.md). The worker is registered even without a schedule:
 * a schedule left in the database after AUDIT_ANCHOR_CRON was removed then fires jobs that post nothing.
 */
export async function registerAuditAnchorJob(deps: AuditAnchorJobDeps): Promise<void> {
  const { jobs, db, logger, webhookUrl, cron } = deps;
  await jobs.work(auditAnchorQueue, async () => {
    if (!webhookUrl || !cron) {
      logger.info('audit anchor job skipped: AUDIT_ANCHOR_CRON or REVIEW_WEBHOOK_URL is not set');
      return;
    }
    const anchors = await anchorAuditChains(db);
    await postAuditAnchors(webhookUrl, anchors, deps.fetch);
    logger.info({ chains: anchors.chains.length }, 'audit chain heads posted to the review webhook');
  });
  if (webhookUrl && cron) await jobs.schedule(auditAnchorQueue, cron, {});
}

/**
 * The message carries the anchors exactly as `clinagent audit verify --export` writes them (`anchors`), so the
 * receiver can save that field as a file for `--anchor`. Only project ids, entry ids, counts and keyed hashes:
 * nothing of an entry's content, so no identifier field reaches the webhook.
 */
export async function postAuditAnchors(webhookUrl: string, anchors: AuditAnchors, doFetch: typeof fetch = fetch): Promise<void> {
  const text = [
    `ClinAgent audit trail heads at ${anchors.createdAt} (audit key ${anchors.keyFingerprint}):`,
    ...anchors.chains.map((chain) => `- ${chain.projectId}: ${chain.entries} entries, head entry ${chain.headId} hash ${chain.headHash}`),
    'Keep this message: `clinagent audit verify --anchor FILE`, with its "anchors" field saved as FILE, shows entries deleted since.',
  ].join('\n');
  let response: Response;
  try {
    response = await doFetch(webhookUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ type: 'audit_anchors', text, anchors }),
      signal: AbortSignal.timeout(WEBHOOK_TIMEOUT_MS),
    });
  } catch (error) {
    // The URL itself stays out of the message: incoming-webhook URLs carry their token in the path.
    throw new ClinAgentError('UPSTREAM_FAILED', `The review webhook (REVIEW_WEBHOOK_URL) is unreachable: ${errorMessage(error)}. The audit anchor job retries; check the URL and the network.`, { field: 'REVIEW_WEBHOOK_URL' }, { cause: error });
  }
  if (!response.ok) {
    throw new ClinAgentError('UPSTREAM_FAILED', `The review webhook (REVIEW_WEBHOOK_URL) answered HTTP ${response.status} to the audit anchors. The job retries; check what the webhook accepts.`, { field: 'REVIEW_WEBHOOK_URL', status: response.status });
  }
}
