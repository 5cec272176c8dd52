import { ClinAgentError, errorMessage } from '../../core/errors.js';
import { redactText } from '../../core/logger.js';
import { parseOffLoop } from '../import/off-loop/parse-off-loop.js';
import type { TrialSchema } from '../import/parse-records.js';
import type { ImportWarning } from '../import/problems.js';
import type { TrialArm, TrialEvent, TrialField, TrialRecord } from '../store/types.js';
import type { RedcapAnswers, RedcapContent } from './check-redcap-answers.js';
import { answerText, declaredLongerThan, mayListItems, readAtMost, type AnswerBytes } from './read-answer.js';
import { errorText } from './redcap-error-text.js';

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
  /** Bytes of one answer read into memory (default DEFAULT_MAX_ANSWER_BYTES); a longer answer is refused with 413. */
  maxAnswerBytes?: number;
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
 * The most of one answer a sync reads: twice the upload limit per file (UPLOAD_MAX_BYTES, 50 MB), as JSON repeats
 * every field name in every row, so an API export is larger than the CSV export of the same records. Parsing it
 * in the import worker takes some ten times its size in memory, well inside the worker's heap.
 */
export const DEFAULT_MAX_ANSWER_BYTES = 100 * 1024 * 1024;
// An error answer is shown as its first 300 characters; this much of it is read (the rest is never buffered).
const ERROR_ANSWER_BYTES = 1024 * 1024;
// What REDCap is asked for in a records export: raw values by variable name, one row per record and event.
const RECORD_EXPORT = { type: 'flat', rawOrLabel: 'raw', rawOrLabelHeaders: 'raw', exportCheckboxLabel: 'false', exportSurveyFields: 'false', exportDataAccessGroups: 'true' };
/** The answer standing for an empty list, where REDCap refuses events and arms of a classic project (it has none). */
const emptyList = (): AnswerBytes => [new Uint8Array([0x5b, 0x5d]).buffer];

/**
 * A client for REDCap's API (POST, form-encoded, JSON answers). It returns the shapes the CSV importer
 * returns and runs the same checks, so a trial loads the same way with or without API access. The token
 * is masked in every error this client raises, since error messages reach logs and API responses.
 *
 * Fetching (the request, HTTP status, a refused token, the timeout, the size bound) happens here, on the
 * server's thread, as it is I/O. Parsing (JSON, the list check, the table checks) happens in the import worker
 * thread (checkRedcapAnswers), since an export of tens of MB held the server's event loop for over a second.
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
  // Masked here and, for answers parsed there, in the import worker: REDCap may echo the token in an answer.
  const secrets = [token, encodeURIComponent(token)];
  const redact = (text: string) => redactText(text, secrets);
  const { requestUrl, url } = checkedUrl(options.url, redact, urlName);
  const fetchFn = options.fetch ?? fetch;
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const maxAnswerBytes = options.maxAnswerBytes ?? DEFAULT_MAX_ANSWER_BYTES;

  /** One export's answer as bytes, its HTTP status checked; a classic project's refused events or arms as an empty list. */
  async function fetchAnswer(content: RedcapContent, extra: Record<string, string> = {}): Promise<AnswerBytes> {
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
      throw new ClinAgentError('UPSTREAM_FAILED', redact(`Could not reach REDCap at ${url} (${failureReason(error, timeoutMs)}). Check ${urlName} and that this server can reach REDCap.`), { url, content });
    }
    if (!response.ok) {
      const refused = await refusal(response, content);
      if (refused === 'classic project') return emptyList();
      throw refused;
    }
    if (declaredLongerThan(response, maxAnswerBytes)) {
      await response.body?.cancel().catch(() => undefined);
      throw tooLarge(content);
    }
    let answer: Awaited<ReturnType<typeof readAtMost>>;
    try {
      answer = await readAtMost(response, maxAnswerBytes);
    } catch (error) {
      throw new ClinAgentError('UPSTREAM_FAILED', redact(`REDCap at ${url} stopped sending its answer to the ${content} export (${failureReason(error, timeoutMs)}). Try again later, or ask the REDCap administrator.`), { url, content });
    }
    if (!answer.complete) throw tooLarge(content);
    return answer.segments;
  }

  /** The error for an answer that is not 2xx, or that REDCap refused events or arms since a classic project has none. */
  async function refusal(response: Response, content: RedcapContent): Promise<ClinAgentError | 'classic project'> {
    // Error answers are short; only their first 300 characters are shown.
    const { segments } = await readAtMost(response, ERROR_ANSWER_BYTES).catch(() => ({ segments: [] }));
    const redcapError = redact(errorText(answerText(segments))).slice(0, 300);
    if (response.status === 401 || response.status === 403) {
      return new ClinAgentError('UPSTREAM_FAILED', `REDCap refused the token (check ${tokenName}): ${redcapError || `HTTP ${response.status}`}`, { url, content, status: response.status });
    }
    if (response.status === 400 && (content === 'event' || content === 'arm') && /classic/i.test(redcapError)) return 'classic project';
    return new ClinAgentError('UPSTREAM_FAILED', `REDCap at ${url} answered HTTP ${response.status} to the ${content} export: ${redcapError || 'no message'}. Try again later, or ask the REDCap administrator.`, { url, content, status: response.status });
  }

  function tooLarge(content: RedcapContent): ClinAgentError {
    return new ClinAgentError(
      'UPLOAD_TOO_LARGE',
      `REDCap's answer to the ${content} export is larger than ${sizeText(maxAnswerBytes)}, the most a sync reads of one answer; nothing was imported. Sync fewer records or forms (a REDCap API user of its own whose export rights cover fewer forms, or one data access group), or import exported files instead: export the records from REDCap in parts (Data Exports, by record range, site or form) and import each file (POST /api/iit/projects/{projectId}/imports).`,
      { content, limit: 'redcapAnswerBytes', max: maxAnswerBytes },
    );
  }

  /** Parses and checks answers in the import worker; `schema` checks records when no metadata comes with them. */
  const parse = (answers: RedcapAnswers, schema?: TrialSchema) => parseOffLoop({ kind: 'redcap-api', answers, schema, url, urlName, secrets });

  const client: RedcapClient = {
    async exportMetadata() {
      return [...(await parse({ metadata: await fetchAnswer('metadata') })).fields];
    },
    async exportEvents() {
      return [...((await parse({ event: await fetchAnswer('event') })).events ?? [])];
    },
    async exportArms() {
      return [...((await parse({ arm: await fetchAnswer('arm') })).arms ?? [])];
    },
    async exportRecords(schema) {
      return [...(await parse({ record: await fetchAnswer('record', RECORD_EXPORT) }, schema)).records];
    },
    async exportProject() {
      const [metadata, event] = await Promise.all([fetchAnswer('metadata'), fetchAnswer('event')]);
      // Only a longitudinal project has events and arms; REDCap refuses content=arm for a classic one.
      const arm = mayListItems(event) ? await fetchAnswer('arm') : undefined;
      const project = await parse({ metadata, event, arm });
      // The records last, once the dictionary and schedule they are checked against are known to be good.
      const { records, warnings } = await parse({ record: await fetchAnswer('record', RECORD_EXPORT) }, { fields: project.fields, events: project.events ?? [] });
      return { fields: [...project.fields], events: [...(project.events ?? [])], arms: [...(project.arms ?? [])], records: [...records], warnings: [...(warnings ?? [])] };
    },
  };
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

/** Why a request or an answer's body failed, for the message: the timeout, or the network's code. */
function failureReason(error: unknown, timeoutMs: number): string {
  return (error as Error)?.name === 'TimeoutError' ? `no answer within ${timeoutMs} ms` : describeNetworkError(error);
}

/** 100 MB, 1.5 MB, or bytes for a bound under a megabyte (a test's). */
function sizeText(bytes: number): string {
  const megabytes = bytes / (1024 * 1024);
  return megabytes >= 1 ? `${Number(megabytes.toFixed(1))} MB` : `${bytes} bytes`;
}

function describeNetworkError(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } })?.cause;
  return cause?.code ?? cause?.message ?? errorMessage(error);
}
