/** The server did not answer (down, restarting, or it died mid-request): nothing it did is known. */
export class ServerUnreachable extends Error {}

export interface Answer {
  status: number;
  body: any;
}

/**
 * The chaos test's HTTP client, as a user's client behaves: a request the server never answered is tried again once
 * the server is back (`retrying`), and only a 2xx answer counts as saved.
 */
export function chaosClient(baseUrl: string, token: string, options: { retryForMs: number }) {
  async function send(method: string, path: string, body?: unknown): Promise<Answer> {
    const isForm = body instanceof FormData;
    let response: Response;
    try {
      response = await fetch(`${baseUrl}${path}`, {
        method,
        headers: { authorization: `Bearer ${token}`, ...(body === undefined || isForm ? {} : { 'content-type': 'application/json' }) },
        body: body === undefined ? undefined : isForm ? body : JSON.stringify(body),
        signal: AbortSignal.timeout(60_000),
      });
    } catch (error) {
      throw new ServerUnreachable(`${method} ${path}: ${(error as Error).message}`);
    }
    const type = response.headers.get('content-type') ?? '';
    let parsed: unknown;
    try {
      parsed = type.includes('json') ? await response.json() : await response.text();
    } catch (error) {
      // The answer was cut off: the server died while sending it.
      throw new ServerUnreachable(`${method} ${path}: the answer was cut off (${(error as Error).message})`);
    }
    return { status: response.status, body: parsed };
  }

  /** `send`, tried again while the server is unreachable or says it is unavailable, for up to retryForMs. */
  async function retrying(method: string, path: string, body?: unknown): Promise<Answer> {
    const deadline = Date.now() + options.retryForMs;
    for (;;) {
      try {
        const answer = await send(method, path, body);
        if (answer.status !== 502 && answer.status !== 503) return answer;
        if (Date.now() > deadline) return answer;
      } catch (error) {
        if (!(error instanceof ServerUnreachable) || Date.now() > deadline) throw error;
      }
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }

  return { send, retrying };
}

export type ChaosClient = ReturnType<typeof chaosClient>;
