import pino, { type Logger } from 'pino';

export type { Logger };

/**
 * Paths pino censors wherever they appear. Keys and tokens must never reach a log line: hospital log
 * shippers keep logs far longer, and far less guarded, than the database.
 */
export const REDACTED_PATHS = [
  'apiKey',
  '*.apiKey',
  '*.*.apiKey',
  'token',
  '*.token',
  'adminToken',
  '*.adminToken',
  'authorization',
  '*.authorization',
  'req.headers.authorization',
  'req.headers.cookie',
  'headers.authorization',
  // The environment names too, one level down as well: `logger.info({ env })` is the usual way they leak.
  'LLM_API_KEY',
  '*.LLM_API_KEY',
  'EMBEDDING_API_KEY',
  '*.EMBEDDING_API_KEY',
  'CLINAGENT_ADMIN_TOKEN',
  '*.CLINAGENT_ADMIN_TOKEN',
  'DATABASE_URL',
  '*.DATABASE_URL',
  'REDCAP_API_TOKEN',
  '*.REDCAP_API_TOKEN',
  '*.*.token',
  '*.headers.authorization',
  'password',
  '*.password',
  'databaseUrl',
  '*.databaseUrl',
];

export function createLogger(level = 'info', destination?: pino.DestinationStream): Logger {
  return pino({ level, redact: { paths: REDACTED_PATHS, censor: '[redacted]' }, base: { app: 'clinagent' } }, destination);
}

/** Masks secret-looking values inside free text (error messages from providers sometimes echo keys). */
export function redactText(text: string, secrets: ReadonlyArray<string | undefined> = []): string {
  let out = text;
  for (const secret of secrets) {
    if (secret && secret.length >= 6) out = out.split(secret).join('[redacted]');
  }
  return out
    .replace(/\b(sk|ca|pk)-[A-Za-z0-9_-]{12,}/g, '[redacted]')
    .replace(/(Bearer\s+)[A-Za-z0-9._~+/=-]{8,}/gi, '$1[redacted]');
}
