import { userInfo } from 'node:os';
import { closeContext, createContext } from '../context.js';
import type { TokenInfo } from '../core/auth/token-issuer.js';
import type { Actor } from '../core/auth/users.js';
import { loadConfig } from '../core/config.js';
import { ClinAgentError } from '../core/errors.js';

const USAGE = 'Usage: clinagent token list <user name or id> | clinagent token revoke <tokenId>';

/**
 * Token housekeeping for the operator at the server's command line, who acts as admin: the way to stop a
 * leaked token when no admin can sign in. Opens the database itself, as login-link does.
 */
export async function tokenCommand(args: string[]): Promise<number> {
  const [action, target, ...extra] = args;
  if ((action !== 'list' && action !== 'revoke') || !target || extra.length) {
    throw new ClinAgentError('VALIDATION_FAILED', `${action && action !== 'list' && action !== 'revoke' ? `Unknown token action "${action}". ` : ''}${USAGE}`);
  }
  const ctx = await createContext(loadConfig());
  // Recorded as the audit actor: the OS account that ran the command, since no ClinAgent user signed in.
  const actor: Actor = { id: 'cli', name: `cli:${operatorName()}`, role: 'admin' };
  try {
    if (action === 'list') {
      const user = (await ctx.users.list()).find((u) => u.id === target || u.name === target);
      if (!user) throw new ClinAgentError('NOT_FOUND', `No user has the name or id "${target}". An admin lists users with GET /api/users.`, { user: target });
      const tokens = await ctx.users.listTokens(user.id, actor);
      process.stdout.write(`Tokens of ${user.name} (${user.id}, ${user.role}${user.deactivatedAt ? ', deactivated' : ''}):\n`);
      if (!tokens.length) process.stdout.write('  (none)\n');
      else process.stdout.write(formatTable(tokens) + '\n');
      return 0;
    }
    const revoked = await ctx.users.revokeToken(target, actor);
    process.stdout.write(`Revoked token ${revoked.id}${revoked.label ? ` (${revoked.label})` : ''}; it stopped working at ${revoked.revokedAt}.\n`);
    return 0;
  } finally {
    await closeContext(ctx);
  }
}

function operatorName(): string {
  try {
    return userInfo().username || 'unknown';
  } catch {
    return 'unknown';
  }
}

function tokenState(token: TokenInfo, now = Date.now()): string {
  if (token.revokedAt) return 'revoked';
  if (token.expiresAt && Date.parse(token.expiresAt) <= now) return 'expired';
  return 'active';
}

function formatTable(tokens: TokenInfo[]): string {
  const rows = [
    ['ID', 'STATE', 'LABEL', 'CREATED', 'LAST USED', 'EXPIRES'],
    ...tokens.map((t) => [t.id, tokenState(t), t.label || '-', t.createdAt, t.lastUsedAt ?? 'never', t.expiresAt ?? 'never']),
  ];
  const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => row[column]!.length)));
  return rows.map((row) => '  ' + row.map((cell, column) => cell.padEnd(widths[column]!)).join('  ').trimEnd()).join('\n');
}
