import { and, asc, eq, isNull } from 'drizzle-orm';
import { closeContext, createContext } from '../context.js';
import { LOGIN_CODE_TTL_MS, signInPath } from '../core/auth/login-codes.js';
import { loadConfig } from '../core/config.js';
import { users } from '../core/db/schema/auth.js';
import { ClinAgentError } from '../core/errors.js';

/** Recovery path when the first-start link was lost: issues a fresh one-time link for the first admin. */
export async function loginLinkCommand(): Promise<number> {
  const config = loadConfig();
  const ctx = await createContext(config);
  try {
    await ctx.users.bootstrapAdmin();
    // A deactivated admin could not use the link: the first active one gets it.
    const [admin] = await ctx.db.select().from(users).where(and(eq(users.role, 'admin'), isNull(users.deactivatedAt))).orderBy(asc(users.createdAt)).limit(1);
    if (!admin) throw new ClinAgentError('NOT_FOUND', 'No active admin user exists. Start the server once (clinagent serve) to create one.');
    const code = await ctx.users.issueLoginCode(admin.id);
    process.stdout.write(`One-time sign-in link for ${admin.name} (valid ${LOGIN_CODE_TTL_MS / 3_600_000} hours, once):\n    http://${config.host}:${config.port}${signInPath(code)}\n`);
    return 0;
  } finally {
    await closeContext(ctx);
  }
}
