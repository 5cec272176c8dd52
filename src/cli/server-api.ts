import { loadConfig } from '../core/config.js';
import { ClinAgentError, errorMessage } from '../core/errors.js';

/**
 * How commands that work through a running server (`qc`, `import`) find it and call its API. The server holds
 * the embedded database, and a second process must not open it, so these commands go through HTTP like the
 * console does.
 */

interface ApiAnswer {
  status: number;
  statusText: string;
  ok: boolean;
  /** The parsed JSON body; undefined when the body was empty or not JSON. */
  payload: unknown;
  text: string;
}

interface ServerApi {
  baseUrl: string;
  /** One call whose non-2xx answer is thrown with the server's own message, which says what to fix. */
  call<T>(method: 'GET' | 'POST', path: string, body?: unknown): Promise<T>;
  /** One call whose answer comes back whatever its status, for a command that reads a refusal's details. */
  send(method: 'GET' | 'POST', path: string, body?: unknown): Promise<ApiAnswer>;
}

type Env = Record<string, string | undefined>;

/**
 * Where the server is: `--url`, else CLINAGENT_URL, else the HOST and PORT the server itself reads (loadConfig),
 * so a server started with PORT=8080 is found without repeating it.
 */
export function serverUrl(urlOption: string | undefined, env: Env = process.env): string {
  const given = urlOption?.trim() || env.CLINAGENT_URL?.trim();
  if (given) return given.replace(/\/+$/, '');
  const config = loadConfig(env);
  if (config.port === 0) {
    throw new ClinAgentError('CONFIG_MISSING', 'PORT is 0, so the server listens on a port chosen at start-up and this command cannot know it. Pass --url with the address the server printed (e.g. --url http://127.0.0.1:43117), or set CLINAGENT_URL.', { field: 'CLINAGENT_URL' });
  }
  return `http://${clientHost(config.host)}:${config.port}`;
}

/** A server listening on every interface is reached on loopback; an IPv6 address needs brackets in a URL. */
function clientHost(host: string): string {
  if (host === '0.0.0.0' || host === '') return '127.0.0.1';
  if (host === '::') return '[::1]';
  return host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
}

/** The console's review queue of a project (web/src/router.ts `routes.trialReview`; the console is a hash router). */
export function consoleReviewUrl(baseUrl: string, projectId: string): string {
  return `${baseUrl}/#/trial/${encodeURIComponent(projectId)}/review`;
}

/** The API token from CLINAGENT_TOKEN, or the server's admin token; `command` names who needs it. */
export function apiToken(command: string, env: Env = process.env): string {
  const token = env.CLINAGENT_TOKEN?.trim() || env.CLINAGENT_ADMIN_TOKEN?.trim();
  if (!token) {
    throw new ClinAgentError('CONFIG_MISSING', `clinagent ${command} calls the server's API and needs a token: set CLINAGENT_TOKEN to your API token (or CLINAGENT_ADMIN_TOKEN to the server's admin token).`, { field: 'CLINAGENT_TOKEN' });
  }
  return token;
}

/** `body` is sent as JSON, or as multipart when it is FormData (fetch then writes the boundary itself). */
export function createServerApi(baseUrl: string, token: string): ServerApi {
  async function send(method: 'GET' | 'POST', path: string, body?: unknown): Promise<ApiAnswer> {
    const isForm = body instanceof FormData;
    let response: Response;
    try {
      response = await fetch(baseUrl + path, {
        method,
        headers: { authorization: `Bearer ${token}`, ...(body === undefined || isForm ? {} : { 'content-type': 'application/json' }) },
        body: body === undefined ? undefined : isForm ? body : JSON.stringify(body),
      });
    } catch (error) {
      const cause = error instanceof Error && error.cause ? errorMessage(error.cause) : errorMessage(error);
      throw new Error(`cannot reach the ClinAgent server at ${baseUrl} (${cause}). Start it with \`clinagent serve\`, or give its address with --url or CLINAGENT_URL.`);
    }
    const text = await response.text();
    let payload: unknown;
    try {
      payload = text ? JSON.parse(text) : undefined;
    } catch {
      payload = undefined;
    }
    return { status: response.status, statusText: response.statusText, ok: response.ok, payload, text };
  }

  return {
    baseUrl,
    send,
    async call<T>(method: 'GET' | 'POST', path: string, body?: unknown): Promise<T> {
      const answer = await send(method, path, body);
      if (!answer.ok) throw apiFailure(method, path, answer);
      return answer.payload as T;
    },
  };
}

/** A refused call as the user reads it: method, path, status, the server's code and message. */
export function apiFailure(method: string, path: string, answer: ApiAnswer): Error {
  const { code, message } = (answer.payload ?? {}) as { code?: string; message?: string };
  return new Error(`${method} ${path} failed with HTTP ${answer.status}${code ? ` ${code}` : ''}: ${message ?? (answer.text.slice(0, 200) || answer.statusText)}`);
}
