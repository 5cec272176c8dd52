import { ClinAgentError, errorMessage } from '../../core/errors.js';
import { redactText } from '../../core/logger.js';
import { jsonTable } from '../import/csv-table.js';
import { parseDictionaryTable } from '../import/parse-dictionary.js';
import { parseArmsTable } from '../import/parse-arms.js';
import { parseEventsTable, type ParseEventsOptions } from '../import/parse-events.js';
import { parseRecordsTable, type TrialSchema } from '../import/parse-records.js';
import { valueOrThrow, type ImportWarning } from '../import/problems.js';
import type { TrialArm, TrialEvent, TrialField, TrialRecord } from '../store/types.js';

interface RedcapClientOptions {
  /** The project's API endpoint, e.g. https://redcap.example.org/api/ (its apiUrl setting). */
  url: string;
  /** The project's API token. Sent in the request body only; never logged or returned. */
  token: string;
  /**
   * Where the URL and the token are configured, named in errors so the reader knows what to fix, e.g.
   * `{ url: 'apiUrl of project demo (PUT /api/iit/projects/demo/redcap)', token: 'REDCAP_TOKEN_DEMO' }`.
   */
  settingNames?: { url?: string; token?: string };
  fetch?: typeof fetch;
  timeoutMs?: number;
}

/** Everything a sync writes, checked like a CSV import; `warnings` are values outside their bounds. */
export interface RedcapProjectExport {
  fields: TrialField[];
  events: TrialEvent[];
  arms: TrialArm[];
  records: TrialRecord[];
  warnings: ImportWarning[];
}

export interface RedcapClient {
  exportMetadata(): Promise<TrialField[]>;
  /** The visit schedule; empty for a classic (non-longitudinal) project. */
  exportEvents(): Promise<TrialEvent[]>;
  /** The arms of a longitudinal project (content=arm); empty for a classic project. */
  exportArms(): Promise<TrialArm[]>;
  /** Every record at every event, checked against the dictionary and schedule like a CSV import. */
  exportRecords(schema: TrialSchema): Promise<TrialRecord[]>;
  /** Dictionary, arms, schedule and records, ready for the store; arms only for a longitudinal project. */
  exportProject(): Promise<RedcapProjectExport>;
}

// A full export of a few thousand records takes REDCap tens of seconds; a minute leaves room on busy servers.
const DEFAULT_TIMEOUT_MS = 60_000;

/**
 * A client for REDCap's API (POST, form-encoded, JSON answers). It returns the shapes the CSV importer
 * returns and runs the same checks, so a trial loads the same way with or without API access. The token
 * is masked in every error this client raises, since error messages reach logs and API responses.
 */
export function createRedcapClient(options: RedcapClientOptions): RedcapClient {
  const tokenName = options.settingNames?.token ?? 'the API token';
  const urlName = options.settingNames?.url ?? 'the API URL';
  const token = options.token?.trim() ?? '';
  if (!token) {
    throw new ClinAgentError('CONFIG_MISSING', `${tokenName} is not set. Set it to the project's API token from REDCap (Applications > API), or import CSV exports instead.`, {
      field: tokenName,
    });
  }
  const redact = (text: string) => redactText(text, [token, encodeURIComponent(token)]);
  const { requestUrl, url } = checkedUrl(options.url, redact, urlName);
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
      throw new ClinAgentError('UPSTREAM_FAILED', redact(`Could not reach REDCap at ${url} (${reason}). Check ${urlName} and that this server can reach REDCap.`), { url, content });
    }
    const text = await response.text().catch(() => '');
    const redcapError = redact(errorText(text)).slice(0, 300);
    if (response.status === 401 || response.status === 403) {
      throw new ClinAgentError('UPSTREAM_FAILED', `REDCap refused the token (check ${tokenName}): ${redcapError || `HTTP ${response.status}`}`, { url, content, status: response.status });
    }
    if (response.status === 400 && (content === 'event' || content === 'arm') && /classic/i.test(redcapError)) return [];
    if (!response.ok) {
      throw new ClinAgentError('UPSTREAM_FAILED', `REDCap at ${url} answered HTTP ${response.status} to the ${content} export: ${redcapError || 'no message'}. Try again later, or ask the REDCap administrator.`, { url, content, status: response.status });
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      throw new ClinAgentError('UPSTREAM_FAILED', `REDCap at ${url} answered the ${content} export with something that is not JSON. Check that ${urlName} is the API endpoint (it usually ends in /api/).`, { url, content });
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
      return eventsOf(await post('event'));
    },
    async exportArms() {
      const items = await post('arm');
      return items.length === 0 ? [] : valueOrThrow(parseArmsTable(jsonTable(items, 'REDCap API arms')));
    },
    async exportRecords(schema) {
      return (await recordsWithWarnings(schema)).records;
    },
    async exportProject() {
      const [fields, eventItems] = await Promise.all([client.exportMetadata(), post('event')]);
      // Only a longitudinal project has events and arms; REDCap refuses content=arm for a classic one.
      const arms = eventItems.length > 0 ? await client.exportArms() : [];
      // Checked like an events file against its arms file: every event must be in a known arm.
      const events = eventsOf(eventItems, arms.length > 0 ? { arms, armsSource: 'the REDCap API arms export' } : {});
      const { records, warnings } = await recordsWithWarnings({ fields, events });
      return { fields, events, arms, records, warnings };
    },
  };

  function eventsOf(items: Array<Record<string, unknown>>, options: ParseEventsOptions = {}): TrialEvent[] {
    return items.length === 0 ? [] : valueOrThrow(parseEventsTable(jsonTable(items, 'REDCap API events'), options));
  }

  async function recordsWithWarnings(schema: TrialSchema): Promise<{ records: TrialRecord[]; warnings: ImportWarning[] }> {
    const items = await post('record', { type: 'flat', rawOrLabel: 'raw', rawOrLabelHeaders: 'raw', exportCheckboxLabel: 'false', exportSurveyFields: 'false', exportDataAccessGroups: 'true' });
    if (items.length === 0) return { records: [], warnings: [] };
    const parsed = parseRecordsTable(jsonTable(items, 'REDCap API records'), schema);
    return { records: valueOrThrow(parsed), warnings: parsed.warnings };
  }
  return client;
}

/** The URL to call, and the URL to show in errors: without user, password or token. */
function checkedUrl(raw: string, redact: (text: string) => string, urlName: string): { requestUrl: string; url: string } {
  let parsed: URL | undefined;
  try {
    parsed = new URL(raw);
  } catch {
    parsed = undefined;
  }
  if (!parsed || (parsed.protocol !== 'https:' && parsed.protocol !== 'http:')) {
    throw new ClinAgentError('CONFIG_INVALID', `${urlName} ${JSON.stringify(redact(raw ?? ''))} is not an http(s) URL. Set it to the API endpoint, e.g. https://redcap.example.org/api/.`, { field: urlName });
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
