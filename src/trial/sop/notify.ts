import { errorMessage } from '../../core/errors.js';

export interface ReviewNotice {
  taskRunId: string;
  projectId: string;
  skillId: string;
  recordId: string;
  node: string;
  description: string;
  /** What the reviewer should look at: the queries this run opened. */
  queries: Array<{ field: string; message: string; severity: string }>;
  reviewUrl?: string;
}

export interface ReviewNotifier {
  /** False without REVIEW_WEBHOOK_URL: nothing is queued then. */
  readonly configured: boolean;
  notify(request: ReviewNotice): Promise<{ delivered: boolean; error?: string }>;
}

/**
 * A webhook that does not answer in this time is given up for this attempt. Notices are sent by a job outside
 * the run (qc/review-notices.ts), which retries a failed attempt with backoff, so a short wait is enough.
 */
const WEBHOOK_TIMEOUT_MS = 5_000;

/**
 * Posts review requests to a webhook (a chat bot, a ticketing system). The text lists the record and what to
 * review, so it reads well in WeCom/DingTalk/Slack style incoming webhooks too.
 */
export function createWebhookNotifier(url: string | undefined, options: { publicUrl?: string; fetch?: typeof fetch; timeoutMs?: number } = {}): ReviewNotifier {
  const doFetch = options.fetch ?? fetch;
  return {
    configured: Boolean(url),
    async notify(request) {
      if (!url) return { delivered: false, error: 'no REVIEW_WEBHOOK_URL configured' };
      const reviewUrl = request.reviewUrl ?? (options.publicUrl ? `${options.publicUrl}/#/review/${request.taskRunId}` : undefined);
      const lines = [
        `Review needed: record ${request.recordId} (project ${request.projectId}, skill ${request.skillId})`,
        request.description,
        ...request.queries.map((q) => `- [${q.severity}] ${q.field}: ${q.message}`),
        ...(reviewUrl ? [`Review: ${reviewUrl}`] : []),
      ];
      try {
        const response = await doFetch(url, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ type: 'review_required', text: lines.join('\n'), ...request, reviewUrl }),
          signal: AbortSignal.timeout(options.timeoutMs ?? WEBHOOK_TIMEOUT_MS),
        });
        return response.ok ? { delivered: true } : { delivered: false, error: `webhook answered HTTP ${response.status}` };
      } catch (error) {
        return { delivered: false, error: `webhook unreachable: ${errorMessage(error)}` };
      }
    },
  };
}
