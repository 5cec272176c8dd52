import { createHash, randomBytes } from 'node:crypto';

/**
 * Tokens are 32 random bytes, so a fast hash is enough to store them: unlike passwords they cannot be
 * guessed from a dictionary. The `cla_` prefix lets secret scanners and our own log redaction spot them.
 */
export function generateToken(prefix = 'cla_'): string {
  return prefix + randomBytes(32).toString('base64url');
}

export function hashToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}
