import { ApiError, toApiError } from './api-error';
import type { DownloadedFile } from './trial-types';

export interface HttpClientOptions {
  /** Returns the current bearer token, or null when signed out. Read per request so sign-in takes effect at once. */
  getToken(): string | null;
  /** Called for every 401 so the app can drop the token and return to the sign-in screen. */
  onUnauthorized(error: ApiError): void;
  fetch?: typeof fetch;
}

export interface HttpClient {
  get<T>(path: string): Promise<T>;
  /** A FormData body is sent as multipart (file uploads), anything else as JSON. */
  post<T>(path: string, body: unknown): Promise<T>;
  patch<T>(path: string, body: unknown): Promise<T>;
  put<T>(path: string, body: unknown): Promise<T>;
  /** A DELETE; the routes answer 204 without a body. */
  delete(path: string): Promise<void>;
  /** A file download. It needs the bearer token, so a plain link cannot fetch it; the caller saves the blob. */
  getFile(path: string): Promise<DownloadedFile>;
}

/** `attachment; filename="x.csv"` -> x.csv; RFC 5987 `filename*=UTF-8''...` wins when both are sent. */
export function filenameFromDisposition(header: string | null): string | null {
  if (!header) return null;
  const extended = /filename\*\s*=\s*(?:UTF-8'')?([^;]+)/i.exec(header);
  if (extended?.[1]) {
    try {
      return decodeURIComponent(extended[1].trim().replace(/^"|"$/g, ''));
    } catch {
      // A malformed escape: fall back to the plain filename below.
    }
  }
  const plain = /filename\s*=\s*"?([^";]+)"?/i.exec(header);
  return plain?.[1]?.trim() || null;
}

type HttpMethod = 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';

/** A thin fetch wrapper: bearer header, JSON in and out, and one error type for every failure. */
export function createHttpClient(options: HttpClientOptions): HttpClient {
  const doFetch = options.fetch ?? globalThis.fetch.bind(globalThis);

  /** Sends the request and turns every failure (network, non-2xx) into an ApiError. */
  async function send(method: HttpMethod, path: string, accept: string, body?: unknown): Promise<Response> {
    const headers: Record<string, string> = { accept };
    const token = options.getToken();
    if (token) headers.authorization = `Bearer ${token}`;
    // A form (file uploads) goes as multipart, its boundary set by fetch; anything else as JSON.
    const isForm = body instanceof FormData;
    if (body !== undefined && !isForm) headers['content-type'] = 'application/json';

    let response: Response;
    try {
      response = await doFetch(path, { method, headers, body: body === undefined ? undefined : isForm ? body : JSON.stringify(body) });
    } catch (cause) {
      throw new ApiError(0, 'NETWORK_ERROR', cause instanceof Error ? cause.message : String(cause));
    }
    if (!response.ok) {
      const error = toApiError(response.status, response.statusText, parseJson(await response.text()));
      if (response.status === 401) options.onUnauthorized(error);
      throw error;
    }
    return response;
  }

  async function request<T>(method: HttpMethod, path: string, body?: unknown): Promise<T> {
    const response = await send(method, path, 'application/json', body);
    const parsed = parseJson(await response.text());
    if (parsed === undefined) {
      throw new ApiError(response.status, 'UNEXPECTED_RESPONSE', `Expected JSON from ${method} ${path}`);
    }
    return parsed as T;
  }

  return {
    get: (path) => request('GET', path),
    post: (path, body) => request('POST', path, body),
    patch: (path, body) => request('PATCH', path, body),
    put: (path, body) => request('PUT', path, body),
    async delete(path) {
      await send('DELETE', path, 'application/json');
    },
    async getFile(path) {
      const response = await send('GET', path, '*/*');
      return { blob: await response.blob(), filename: filenameFromDisposition(response.headers.get('content-disposition')) };
    },
  };
}

function parseJson(text: string): unknown {
  if (!text) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    // A proxy or a crashed server can answer with HTML; the caller falls back to a status-based error.
    return undefined;
  }
}
