import { createHash, createHmac } from 'node:crypto';
import { inspect } from 'node:util';
import { ClinAgentError } from '../errors.js';

/** Shorter secrets could be guessed offline from any entry and its hash; 32 characters of `openssl rand -hex 32` are 128 bits or more. */
const MIN_AUDIT_KEY_LENGTH = 32;

/** SHA-256's block size: HMAC pads (or first hashes) its key to this many bytes (RFC 2104). */
const BLOCK_BYTES = 64;

/**
 * The custom settings every ClinAgent database session carries (src/core/db/connect.ts) and the audit chain
 * trigger reads (migration 0008). The pads are the key XOR ipad/opad, so the database computes
 * HMAC-SHA256 with its built-in sha256() alone; the id tells a session with another key apart.
 */
export const AUDIT_KEY_SETTINGS = { innerPad: 'clinagent.audit_key_ipad', outerPad: 'clinagent.audit_key_opad', fingerprint: 'clinagent.audit_key_id' } as const;

/**
 * The secret that keys the audit hash chain. It is kept outside the database (AUDIT_KEY, or a key file) so
 * that someone who can edit the database cannot recompute the hashes of entries they changed.
 * The secret itself is a private field and the object prints as its fingerprint only, so it cannot end up in a
 * log line, a trace or an error by accident.
 */
export class AuditKey {
  readonly #secret: Buffer;
  /** Safe to show and store: HMAC of a fixed text, so it identifies the key without revealing it. */
  readonly fingerprint: string;

  constructor(
    secret: string,
    /** Where the key came from, for messages: "AUDIT_KEY", "key file /srv/clinagent/.clinagent.audit-key". */
    readonly source: string,
  ) {
    this.#secret = Buffer.from(secret, 'utf8');
    this.fingerprint = this.mac('clinagent audit key fingerprint').slice(0, 32);
  }

  /** HMAC-SHA256 of `message` (UTF-8), hex: what the chain trigger computes over an entry's canonical form. */
  mac(message: string): string {
    return createHmac('sha256', this.#secret).update(message, 'utf8').digest('hex');
  }

  /** The values of AUDIT_KEY_SETTINGS for a database session, hex. */
  sessionSettings(): { innerPad: string; outerPad: string; fingerprint: string } {
    const key = Buffer.alloc(BLOCK_BYTES);
    (this.#secret.length > BLOCK_BYTES ? createHash('sha256').update(this.#secret).digest() : this.#secret).copy(key);
    const pad = (byte: number) => Buffer.from(key.map((b) => b ^ byte)).toString('hex');
    return { innerPad: pad(0x36), outerPad: pad(0x5c), fingerprint: this.fingerprint };
  }

  toJSON(): string {
    return `[audit key ${this.fingerprint}]`;
  }

  [inspect.custom](): string {
    return this.toJSON();
  }
}

/** Validates a secret from AUDIT_KEY or a key file (surrounding whitespace, such as the newline `openssl` writes, is ignored). */
export function auditKeyFromSecret(secret: string, source: string): AuditKey {
  const trimmed = secret.trim();
  if (trimmed.length < MIN_AUDIT_KEY_LENGTH) {
    throw new ClinAgentError(
      'CONFIG_INVALID',
      `The audit key from ${source} has ${trimmed.length} characters; it needs at least ${MIN_AUDIT_KEY_LENGTH}. Generate one with \`openssl rand -hex 32\`.`,
      { field: 'AUDIT_KEY', source },
    );
  }
  return new AuditKey(trimmed, source);
}
