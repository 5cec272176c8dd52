import { ClinAgentError } from '../../../core/errors.js';

/** Dify's error body (`{code, message, status}`), on an HTTP error and in a stream's `error` event alike. */
export interface DifyErrorBody {
  code: string;
  message: string;
  status: number;
}

/**
 * The per-app concurrency cap (APP_MAX_ACTIVE_REQUESTS): the same request succeeds once another finishes.
 * `rate_limit_error` is a quota or an upstream model's limit, which a retry seconds later does not clear.
 */
export const RETRYABLE_DIFY_CODES: ReadonlySet<string> = new Set(['too_many_requests']);

/** Reads an error body; anything else (an HTML page from a proxy) becomes `http_<status>` with its first words. */
export function readDifyErrorBody(status: number, text: string): DifyErrorBody {
  try {
    const body = JSON.parse(text) as Partial<DifyErrorBody>;
    if (body && typeof body.code === 'string') return { code: body.code, message: typeof body.message === 'string' ? body.message : '', status: typeof body.status === 'number' ? body.status : status };
  } catch {
    // not JSON: described below
  }
  return { code: `http_${status}`, message: text.replace(/\s+/g, ' ').trim().slice(0, 200), status };
}

/** What to do about each kind of refusal, for the people who read the failed result. */
function advice(code: string, message: string): string {
  // Dify's words when a start-form variable is missing or of the wrong kind ("<var> is required in input form").
  if (code === 'invalid_param' && /in input form/.test(message)) {
    return "Give the app's start-form values: engine.inputs in the scenario file for fixed ones, or inputs with the run (the API's inputs, clinagent run --input name=value, the console's start form).";
  }
  switch (code) {
    case 'unauthorized':
      return "Check that the key variable holds this app's API key (Dify: the app's API Access page).";
    case 'app_unavailable':
      return 'Publish the app in Dify and check its model settings.';
    case 'too_many_requests':
      return 'The app is running as many requests as it allows; try again shortly or raise its limit in Dify.';
    case 'not_found':
      return "Check the scenario's engine.base_url (it ends in /v1) and that the conversation still exists in Dify.";
    default:
      return 'The Dify app refused or could not finish the run.';
  }
}

/** A Dify refusal as the error a failed AgentResult shows: the scenario, Dify's code and message, and what to do. */
export function difyError(scenarioId: string, body: DifyErrorBody, where: 'request' | 'stream'): ClinAgentError {
  const said = body.message ? `: ${body.message}` : '';
  const when = where === 'stream' ? ' while answering' : '';
  return new ClinAgentError('UPSTREAM_FAILED', `The Dify app of scenario ${scenarioId} failed${when} with ${body.code} (HTTP ${body.status})${said}. ${advice(body.code, body.message)}`, {
    difyCode: body.code,
    difyStatus: body.status,
  });
}
