/**
 * PostgreSQL restarting, shutting down or unreachable: SQLSTATE 57P01-57P03 (administrator shutdown, crash shutdown,
 * cannot connect now), class 08 (connection exceptions), a refused or reset socket, or node-postgres's "Connection
 * terminated" and "not queryable" (a connection that broke earlier). What failed on it may be tried again once the
 * database is back; statements that committed before it failed stay committed. Wrapped errors
 * (drizzle's "Failed query" keeps the driver's error as its cause) are looked through.
 */
const UNAVAILABLE_CODES = new Set(['57P01', '57P02', '57P03', 'ECONNREFUSED', 'ECONNRESET', 'EPIPE']);

export function isDatabaseUnavailable(error: unknown): boolean {
  let current = error as { code?: unknown; message?: unknown; cause?: unknown } | undefined;
  for (let depth = 0; current && typeof current === 'object' && depth < 5; depth++) {
    const code = typeof current.code === 'string' ? current.code : '';
    if (UNAVAILABLE_CODES.has(code) || /^08[0-9A-Z]{3}$/.test(code)) return true;
    if (typeof current.message === 'string' && /^Connection terminated|encountered a connection error and is not queryable/.test(current.message)) return true;
    current = current.cause as typeof current;
  }
  return false;
}
