import { and, eq, isNull } from 'drizzle-orm';
import { appendAudit, PLATFORM_AUDIT_SCOPE } from '../audit/audit-log.js';
import type { Db } from '../db/connect.js';
import { apiTokens, users } from '../db/schema/auth.js';
import type { LoginCodeStore } from './login-codes.js';
import { hashToken } from './tokens.js';
import { withTransaction } from '../db/transaction.js';

export interface AdminBootstrap {
  /** First start: makes sure an admin can sign in. Returns a login code when one was issued. */
  bootstrapAdmin(adminToken?: string): Promise<{ created: boolean; loginCode?: string }>;
}

export function createAdminBootstrap(db: Db, deps: { loginCodes: Pick<LoginCodeStore, 'issueLoginCode'> }): AdminBootstrap {
  return {
    async bootstrapAdmin(adminToken) {
      const [admin] = await db.select({ id: users.id }).from(users).where(and(eq(users.role, 'admin'), isNull(users.deactivatedAt))).orderBy(users.createdAt).limit(1);
      const [anyUser] = await db.select({ id: users.id }).from(users).limit(1);
      // Only an empty database gets an admin on its own; otherwise CLINAGENT_ADMIN_TOKEN or the CLI decides.
      if (!admin && anyUser && !adminToken) return { created: false };
      let adminId = admin?.id;
      if (!adminId) {
        const name = anyUser ? `admin-${Date.now()}` : 'admin';
        adminId = await withTransaction(db, async (tx) => {
          const [row] = await tx.insert(users).values({ name, role: 'admin' }).returning({ id: users.id });
          await appendAudit(tx, { projectId: PLATFORM_AUDIT_SCOPE, entityType: 'user', entityId: row!.id, action: 'created', actor: 'system', newValue: { name, role: 'admin' }, reason: 'first start' });
          return row!.id;
        });
      }
      if (adminToken) {
        // The token from the environment never expires: automation that holds it must not break after 30 days.
        await withTransaction(db, async (tx) => {
          const [row] = await tx.insert(apiTokens).values({ userId: adminId, tokenHash: hashToken(adminToken), label: 'CLINAGENT_ADMIN_TOKEN', expiresAt: null }).onConflictDoNothing().returning({ id: apiTokens.id });
          if (row) await appendAudit(tx, { projectId: PLATFORM_AUDIT_SCOPE, entityType: 'token', entityId: row.id, action: 'issued', actor: 'system', newValue: { userId: adminId, label: 'CLINAGENT_ADMIN_TOKEN', expiresAt: null } });
        });
        return { created: !admin };
      }
      return admin ? { created: false } : { created: true, loginCode: await deps.loginCodes.issueLoginCode(adminId) };
    },
  };
}
