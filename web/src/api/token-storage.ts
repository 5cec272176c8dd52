/**
 * The bearer token lives in localStorage so a reload keeps the user signed in. The key is part of the
 * contract with the server's login link flow and the e2e test; do not rename it.
 */
export const TOKEN_KEY = 'clinagent.token';

export function readToken(): string | null {
  try {
    return localStorage.getItem(TOKEN_KEY);
  } catch {
    // Storage can be disabled (privacy mode, sandboxed iframe); the console then works for one page load.
    return null;
  }
}

export function writeToken(token: string | null): void {
  try {
    if (token === null) localStorage.removeItem(TOKEN_KEY);
    else localStorage.setItem(TOKEN_KEY, token);
  } catch {
    // See readToken: without storage the session simply does not survive a reload.
  }
}
