import pino, { type Logger } from 'pino';
import { createSecretRegistry, MIN_SECRET_LENGTH, redactKnownShapes, type SecretRegistry } from './secrets.js';

export type { Logger };

/**
 * Paths pino censors wherever they appear. Keys and tokens must never reach a log line: hospital log
 * shippers keep logs far longer, and far less guarded, than the database.
 */
const REDACTED_PATHS = [
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

interface CreateLoggerOptions {
  /**
   * Values masked in every line written, wherever they sit: message, error message, `err.cause` chain,
   * nested objects. Defaults to a new, empty registry; add to it later through `loggerSecrets(logger)`.
   */
  secrets?: SecretRegistry;
}

const SECRETS = Symbol('clinagent.logger.secrets');

/**
 * Path redaction above only catches secrets under known key names. A provider's 401 message ("Incorrect
 * API key provided: sk-...") ends up in `err.message` or in a cause several levels down, so every finished
 * line also passes through the secret registry before it reaches the destination. Child loggers write to
 * the same stream, so they are covered too.
 */
function redactingStream(target: pino.DestinationStream, secrets: SecretRegistry): pino.DestinationStream {
  const flushable = target as pino.DestinationStream & { flushSync?: () => void; flush?: (cb?: () => void) => void; end?: () => void };
  return Object.assign(
    {
      write: (line: string) => target.write(secrets.redact(line)),
      flushSync: () => flushable.flushSync?.(),
      flush: (cb?: () => void) => (flushable.flush ? flushable.flush(cb) : cb?.()),
      end: () => flushable.end?.(),
    },
    { [SECRETS]: secrets },
  );
}

export function createLogger(level = 'info', destination?: pino.DestinationStream, options: CreateLoggerOptions = {}): Logger {
  const secrets = options.secrets ?? createSecretRegistry();
  const stream = redactingStream(destination ?? pino.destination({ dest: 1, sync: false }), secrets);
  return pino({ level, redact: { paths: REDACTED_PATHS, censor: '[redacted]' }, base: { app: 'clinagent' } }, stream);
}

/** The registry a logger made by createLogger masks; undefined for a logger built elsewhere. */
export function loggerSecrets(logger: Logger): SecretRegistry | undefined {
  const stream = (logger as unknown as Record<symbol, unknown>)[pino.symbols.streamSym] as Record<symbol, unknown> | undefined;
  return stream?.[SECRETS] as SecretRegistry | undefined;
}

/** Masks secret-looking values inside free text (error messages from providers sometimes echo keys). */
export function redactText(text: string, secrets: ReadonlyArray<string | undefined> = []): string {
  let out = text;
  for (const secret of secrets) {
    if (secret && secret.length >= MIN_SECRET_LENGTH) out = out.split(secret).join('[redacted]');
  }
  return redactKnownShapes(out);
}
