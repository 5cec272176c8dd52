import { ClinAgentError, errorMessage } from '../../core/errors.js';
import { redactText } from '../../core/logger.js';
import { jsonTable } from '../import/csv-table.js';
import { parseDictionaryTable } from '../import/parse-dictionary.js';
import { parseEventsTable } from '../import/parse-events.js';
import { parseRecordsTable, type TrialSchema } from '../import/parse-records.js';
import { valueOrThrow } from '../import/problems.js';
import type { TrialEvent, TrialField, TrialRecord } from '../store/types.js';

export interface RedcapClientOptions {
  /** The project's API endpoint, e.g. https://redcap.example.org/api/ (REDCAP_API_URL). */
  url: string;
  /** The project's API token (REDCAP_API_TOKEN). Sent in the request body only; never logged or returned. */
  token: string;
  fetch?: typeof fetch;
  timeoutMs?: number;
}

export interface RedcapClient {
  exportMetadata(): Promise<TrialField[]>;
  /** The visit schedule; empty for a classic (non-longitudinal) project. */
  exportEvents(): Promise<TrialEvent[]>;
  /** Every record at every event, checked against the dictionary and schedule like a CSV import. */
  exportRecords(schema: TrialSchema): Promise<TrialRecord[]>;
  /** Dictionary, schedule and records, ready for the store (replaceDictionary, replaceEvents, importRecords). */
  exportProject(): Promise<{ fields: TrialField[]; events: TrialEvent[]; records: TrialRecord[] }>;
}

// A full export of a few thousand records takes REDCap tens of seconds; a minute leaves room on busy servers.
const DEFAULT_TIMEOUT_MS = 60_000;

/**
 * A client for REDCap's API (POST, form-encoded, JSON answers). It returns the shapes the CSV importer
 * returns and runs the same checks, so a trial loads the same way with or without API access. The token
 * is masked in every error this client raises, since error messages reach logs and API responses.
 */
export function createRedcapClient(options: RedcapClientOptions): RedcapClient {
  const token = options.token?.trim() ?? '';
  if (!token) {
    throw new ClinAgentError('CONFIG_MISSING', 'REDCAP_API_TOKEN is not set. Set it to the project\'s API token from REDCap (Applications > API), or import CSV exports instead.', {
      field: 'REDCAP_API_TOKEN',
    });
  }
  const redact = (text: string) => redactText(text, [token, encodeURIComponent(token)]);
  const { requestUrl, url } = checkedUrl(options.url, redact);
  const fetchFn = options.fetch ?? fetch;
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;

  async function post(content: string, extra: Record<string, string> = {}): Promise<Array<Record<string, unknown>>> {
    const body = new URLSearchParams({ token, content, format: 'json', returnFormat: 'json', ...extra });
    let response: Response;
    try {
      response = await fetchFn(requestUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
        body,
        signal: AbortSignal.timeout(timeoutMs),
      });
    } catch (error) {
      // No `cause`: a foreign error object may carry the request, token included, into a log.
      const reason = (error as Error)?.name === 'TimeoutError' ? `no answer within ${timeoutMs} ms` : describeNetworkError(error);
      throw new ClinAgentError('UPSTREAM_FAILED', redact(`Could not reach REDCap at ${url} (${reason}). Check REDCAP_API_URL and that this server can reach REDCap.`), { url, content });
    }
    const text = await response.text().catch(() => '');
    const redcapError = redact(errorText(text)).slice(0, 300);
    if (response.status === 401 || response.status === 403) {
      throw new ClinAgentError('UPSTREAM_FAILED', `REDCap refused the token (check REDCAP_API_TOKEN): ${redcapError || `HTTP ${response.status}`}`, { url, content, status: response.status });
    }
    if (response.status === 400 && content === 'event' && /classic/i.test(redcapError)) return [];
    if (!response.ok) {
      throw new ClinAgentError('UPSTREAM_FAILED', `REDCap at ${url} answered HTTP ${response.status} to the ${content} export: ${redcapError || 'no message'}. Try again later, or ask the REDCap administrator.`, { url, content, status: response.status });
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      throw new ClinAgentError('UPSTREAM_FAILED', `REDCap at ${url} answered the ${content} export with something that is not JSON. Check that REDCAP_API_URL is the API endpoint (it usually ends in /api/).`, { url, content });
    }
    if (!Array.isArray(parsed)) {
      throw new ClinAgentError('UPSTREAM_FAILED', `REDCap at ${url} answered the ${content} export without a list: ${redact(errorText(text)).slice(0, 300)}`, { url, content });
    }
    return parsed as Array<Record<string, unknown>>;
  }

  const client: RedcapClient = {
    async exportMetadata() {
      return valueOrThrow(parseDictionaryTable(jsonTable(await post('metadata'), 'REDCap API metadata')));
    },
    async exportEvents() {
      const items = await post('event');
      return items.length === 0 ? [] : valueOrThrow(parseEventsTable(jsonTable(items, 'REDCap API events')));
    },
    async exportRecords(schema) {
      const items = await post('record', { type: 'flat', rawOrLabel: 'raw', rawOrLabelHeaders: 'raw', exportCheckboxLabel: 'false', exportSurveyFields: 'false', exportDataAccessGroups: 'true' });
      return items.length === 0 ? [] : valueOrThrow(parseRecordsTable(jsonTable(items, 'REDCap API records'), schema));
    },
    async exportProject() {
      const [fields, events] = await Promise.all([client.exportMetadata(), client.exportEvents()]);
      return { fields, events, records: await client.exportRecords({ fields, events }) };
    },
  };
  return client;
}

/** The URL to call, and the URL to show in errors: without user, password or token. */
function checkedUrl(raw: string, redact: (text: string) => string): { requestUrl: string; url: string } {
  let parsed: URL | undefined;
  try {
    parsed = new URL(raw);
  } catch {
    parsed = undefined;
  }
  if (!parsed || (parsed.protocol !== 'https:' && parsed.protocol !== 'http:')) {
    throw new ClinAgentError('CONFIG_INVALID', `REDCAP_API_URL ${JSON.stringify(redact(raw ?? ''))} is not an http(s) URL. Set it to the API endpoint, e.g. https://redcap.example.org/api/.`, { field: 'REDCAP_API_URL' });
  }
  const requestUrl = parsed.toString();
  parsed.username = '';
  parsed.password = '';
  return { requestUrl, url: redact(parsed.toString()) };
}

/** REDCap answers errors as {"error": "..."}; anything else is shown as text. */
function errorText(body: string): string {
  try {
    const parsed = JSON.parse(body) as { error?: unknown };
    if (parsed && typeof parsed.error === 'string') return parsed.error;
  } catch {
    // Not JSON: an HTML error page or plain text.
  }
  return body.replace(/<[^>]*>/g, ' ').replace(/\s+/g, ' ').trim();
}

function describeNetworkError(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } })?.cause;
  return cause?.code ?? cause?.message ?? errorMessage(error);
}
