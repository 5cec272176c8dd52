import { ApiError, toApiError } from './api-error';

export interface HttpClientOptions {
  /** Returns the current bearer token, or null when signed out. Read per request so sign-in takes effect at once. */
  getToken(): string | null;
  /** Called for every 401 so the app can drop the token and return to the sign-in screen. */
  onUnauthorized(error: ApiError): void;
  fetch?: typeof fetch;
}

export interface HttpClient {
  get<T>(path: string): Promise<T>;
  post<T>(path: string, body: unknown): Promise<T>;
}

/** A thin fetch wrapper: bearer header, JSON in and out, and one error type for every failure. */
export function createHttpClient(options: HttpClientOptions): HttpClient {
  const doFetch = options.fetch ?? globalThis.fetch.bind(globalThis);

  async function request<T>(method: 'GET' | 'POST', path: string, body?: unknown): Promise<T> {
    const headers: Record<string, string> = { accept: 'application/json' };
    const token = options.getToken();
    if (token) headers.authorization = `Bearer ${token}`;
    if (body !== undefined) headers['content-type'] = 'application/json';

    let response: Response;
    try {
      response = await doFetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    } catch (cause) {
      throw new ApiError(0, 'NETWORK_ERROR', cause instanceof Error ? cause.message : String(cause));
    }

    const text = await response.text();
    let parsed: unknown = undefined;
    if (text) {
      try {
        parsed = JSON.parse(text);
      } catch {
        // A proxy or a crashed server can answer with HTML; fall through to a status-based error below.
        parsed = undefined;
      }
    }

    if (!response.ok) {
      const error = toApiError(response.status, response.statusText, parsed);
      if (response.status === 401) options.onUnauthorized(error);
      throw error;
    }
    if (parsed === undefined) {
      throw new ApiError(response.status, 'UNEXPECTED_RESPONSE', `Expected JSON from ${method} ${path}`);
    }
    return parsed as T;
  }

  return {
    get: (path) => request('GET', path),
    post: (path, body) => request('POST', path, body),
  };
}
