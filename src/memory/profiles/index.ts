import { eq } from 'drizzle-orm';
import { z } from 'zod';
import { appendAudit, PLATFORM_AUDIT_SCOPE } from '../../core/audit/audit-log.js';
import type { MembershipCheck } from '../../core/auth/membership.js';
import type { User } from '../../core/auth/users.js';
import type { Db } from '../../core/db/connect.js';
import { users } from '../../core/db/schema/auth.js';
import { userProfiles } from '../../core/db/schema/memory.js';
import { ClinAgentError, formatIssues } from '../../core/errors.js';
import { isUuid } from '../../core/ids.js';
import { dataBlock } from '../../core/llm/untrusted-data.js';
import type { MemoryDeps, ProfileService, UserProfileView } from '../types.js';
import { withTransaction } from '../../core/db/transaction.js';

/** The label of the profile's data block in every assistant prompt. */
const USER_PROFILE_LABEL = 'user_profile';

const MAX_ROLE_TITLE_CHARS = 60;

// C0 and C1 control characters: a role title is one line of a prompt, never a place for line breaks or escapes.
// eslint-disable-next-line no-control-regex
const CONTROL_CHARACTERS = /[\u0000-\u001f\u007f-\u009f]/;

const PROFILE_INPUT = z.object({
  detailLevel: z.enum(['brief', 'standard', 'detailed'], { error: 'must be brief, standard or detailed' }).optional(),
  language: z.enum(['auto', 'zh', 'en'], { error: 'must be auto, zh or en' }).optional(),
  roleTitle: z
    .string({ error: 'must be text, such as "PI" or "CRC"' })
    .trim()
    .refine((title) => [...title].length <= MAX_ROLE_TITLE_CHARS, { message: `must be at most ${MAX_ROLE_TITLE_CHARS} characters` })
    .refine((title) => !CONTROL_CHARACTERS.test(title), { message: 'must be one line without control characters' })
    .optional(),
});

type ProfileRow = typeof userProfiles.$inferSelect;

const NEVER_SAVED = new Date(0);

const DEFAULTS = { detailLevel: 'standard', language: 'auto', roleTitle: '' } as const;

/**
 * How each user likes to be answered (seed 000 V2.9 ProfilerService): detail level, answer language and the
 * role they hold in the trial. Per user, not per project; a user reads and changes their own, admins anyone's.
 */
export function createProfiles(deps: MemoryDeps & { users: MembershipCheck }): ProfileService {
  const { db } = deps;

  async function assertMayAccess(actor: User, userId: string): Promise<void> {
    if (actor.id === userId) return;
    if (actor.role !== 'admin') {
      throw new ClinAgentError('FORBIDDEN', `You can only read and change your own answer profile; user "${userId}" is someone else. Ask an admin to change another user's profile.`, { userId });
    }
    const [row] = isUuid(userId) ? await db.select({ id: users.id }).from(users).where(eq(users.id, userId)) : [];
    if (!row) throw new ClinAgentError('NOT_FOUND', `User "${userId}" does not exist. Check the id (GET /api/users).`, { userId });
  }

  async function read(userId: string): Promise<ProfileRow | undefined> {
    if (!isUuid(userId)) return undefined;
    const [row] = await db.select().from(userProfiles).where(eq(userProfiles.userId, userId));
    return row;
  }

  return {
    async get(actor, userId) {
      await assertMayAccess(actor, userId);
      return toView(userId, await read(userId));
    },

    async put(actor, userId, input) {
      await assertMayAccess(actor, userId);
      const parsed = PROFILE_INPUT.safeParse(input ?? {});
      if (!parsed.success) {
        const problems = formatIssues(parsed.error.issues);
        throw new ClinAgentError('VALIDATION_FAILED', `The answer profile cannot be saved:\n- ${problems.join('\n- ')}`, { problems, fields: [...new Set(parsed.error.issues.map((issue) => String(issue.path[0] ?? '')))] });
      }
      const change = Object.fromEntries(Object.entries(parsed.data).filter(([, value]) => value !== undefined)) as Partial<Pick<ProfileRow, 'detailLevel' | 'language' | 'roleTitle'>>;
      return withTransaction(db, async (tx) => {
        // Insert-if-missing, then lock: two saves of one profile run one after the other. The placeholder row is
        // marked by an updated_at of 0 and never outlives this transaction: it is either updated below or the
        // save changed nothing of a profile that already existed.
        await tx.insert(userProfiles).values({ userId, updatedAt: NEVER_SAVED }).onConflictDoNothing();
        const [before] = await tx.select().from(userProfiles).where(eq(userProfiles.userId, userId)).for('update');
        const oldValue = pick(before!);
        const newValue = { ...oldValue, ...change };
        // Saving what is already there changes nothing and records nothing.
        if (JSON.stringify(newValue) === JSON.stringify(oldValue) && before!.updatedAt.getTime() !== NEVER_SAVED.getTime()) return toView(userId, before);
        const [after] = await tx.update(userProfiles).set({ ...change, updatedAt: new Date() }).where(eq(userProfiles.userId, userId)).returning();
        await appendAudit(tx, { projectId: PLATFORM_AUDIT_SCOPE, entityType: 'profile', entityId: userId, action: 'profile.updated', actor: actor.name, oldValue, newValue });
        return toView(userId, after);
      });
    },

    async promptBlock(userId) {
      const profile = toView(userId, await read(userId));
      return dataBlock(USER_PROFILE_LABEL, [`detail_level: ${profile.detailLevel}`, `language: ${profile.language}`, `role_title: ${profile.roleTitle || '(not set)'}`].join('\n'));
    },
  };
}

function pick(row: ProfileRow): { detailLevel: string; language: string; roleTitle: string } {
  return { detailLevel: row.detailLevel, language: row.language, roleTitle: row.roleTitle };
}

/** A profile never saved reads as the defaults, with no update time. */
function toView(userId: string, row: ProfileRow | undefined): UserProfileView {
  if (!row || row.updatedAt.getTime() === NEVER_SAVED.getTime()) return { userId, ...DEFAULTS, updatedAt: null };
  return { userId, detailLevel: row.detailLevel, language: row.language, roleTitle: row.roleTitle, updatedAt: row.updatedAt.toISOString() };
}
