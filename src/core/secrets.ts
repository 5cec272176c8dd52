/**
 * The values that must never appear in a log line, a trace or an error shown to a user: API keys and tokens
 * from the configuration, plus any secret the code reads later (a REDCap token named by a project's
 * settings). One registry per process, shared by the logger's output stream and the trace store, so a
 * value registered at run time is masked everywhere from then on.
 */
export interface SecretRegistry {
  /** Registers values to mask; undefined, empty and very short values are ignored (see MIN_SECRET_LENGTH). */
  add(...values: ReadonlyArray<string | null | undefined>): void;
  /** `text` with every registered value, in raw, JSON-escaped and URL-encoded form, replaced by `[redacted]`. */
  redact(text: string): string;
  readonly size: number;
}

/**
 * Shorter values are not masked: replacing every "EMPTY" or "none" (the dummy keys local vLLM and Ollama
 * accept) would garble ordinary log text while protecting nothing.
 */
export const MIN_SECRET_LENGTH = 6;

const REDACTED = '[redacted]';

export function createSecretRegistry(initial: ReadonlyArray<string | null | undefined> = []): SecretRegistry {
  // Every form a value takes on its way out: as is, inside a JSON string (a log line or a trace row) and
  // inside a URL (a REDCap or webhook request logged by its URL).
  const forms = new Set<string>();
  let count = 0;
  const registry: SecretRegistry = {
    add(...values) {
      for (const value of values) {
        if (typeof value !== 'string' || value.length < MIN_SECRET_LENGTH) continue;
        if (forms.has(value)) continue;
        count++;
        for (const form of [value, JSON.stringify(value).slice(1, -1), encodeURIComponent(value)]) forms.add(form);
      }
    },
    redact(text) {
      let out = text;
      // Longest first, so a secret that contains another is masked whole.
      for (const form of [...forms].sort((a, b) => b.length - a.length)) if (out.includes(form)) out = out.split(form).join(REDACTED);
      return redactKnownShapes(out);
    },
    get size() {
      return count;
    },
  };
  registry.add(...initial);
  return registry;
}

/**
 * Keys and tokens recognisable by their shape, masked even when nobody registered them: provider keys
 * (`sk-...`, as OpenAI-compatible providers echo them in 401 messages), our own `cla_` tokens and bearer
 * headers.
 */
export function redactKnownShapes(text: string): string {
  return text
    .replace(/\b(sk|ca|pk)-[A-Za-z0-9_-]{12,}/g, REDACTED)
    .replace(/\bcla_[A-Za-z0-9_-]{20,}/g, REDACTED)
    .replace(/(Bearer\s+)[A-Za-z0-9._~+/=-]{8,}/gi, `$1${REDACTED}`);
}
