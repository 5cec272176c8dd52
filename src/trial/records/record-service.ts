import { setIdentifierAccess } from '../../core/auth/identifier-access.js';
import type { MembershipCheck } from '../../core/auth/membership.js';
import { assertProjectReader } from '../../core/auth/project-access.js';
import type { ProjectDirectory } from '../../core/auth/projects.js';
import type { User } from '../../core/auth/users.js';
import { verifyAuditChain } from '../../core/audit/verify-audit-chain.js';
import type { Db } from '../../core/db/connect.js';
import { ClinAgentError } from '../../core/errors.js';
import { identifierMask, maskAuditEntries } from '../identifiers.js';
import { listQueries } from '../queries.js';
import { createQueryView } from '../queries/query-view.js';
import { buildRecordCrf } from '../record-view/record-crf.js';
import type { TrialStore } from '../store/trial-store.js';
import type { AuditEntityType } from '../store/types.js';

interface RecordServiceDeps {
  db: Db;
  store: TrialStore;
  users: MembershipCheck & ProjectDirectory;
}

/**
 * A trial's data as its members read it: projects with their counts, record rows, one subject's page, the audit
 * trail and its hash chain, and who may see identifier fields. Record values, query values and messages and every
 * audit entry show identifier fields only to users allowed to see them (trial/identifiers.ts); everyone else gets
 * them masked. A non-member gets NOT_FOUND, as if the project did not exist.
 */
export function createRecordService(deps: RecordServiceDeps) {
  const { db, store, users } = deps;
  const queryView = createQueryView(deps);

  return {
    /** Projects the user can see, with how many subjects and record rows each holds, and the user's role in each. */
    projects: async (actor: User) =>
      Promise.all(
        (await users.listProjects(actor)).map(async (p) => ({ ...p, ...(await store.countRecords(p.id)), sites: await store.listSites(p.id), role: (await users.roleIn(p.id, actor)) ?? actor.role })),
      ),
    records: async (actor: User, projectId: string, page: { site?: string; limit?: number; offset?: number } = {}) => {
      await assertProjectReader(users, actor, projectId);
      const mask = await identifierMask(db, projectId, actor);
      return (await store.listRecords(projectId, page)).map(mask.record);
    },
    record: async (actor: User, projectId: string, recordId: string) => {
      const view = await queryView(actor, projectId);
      const events = await store.getRecord(projectId, recordId);
      if (!events.length) throw new ClinAgentError('NOT_FOUND', `Record "${recordId}" does not exist in project "${projectId}".`, { recordId });
      const { mask } = view;
      const [dictionary, schedule, arms, queries] = await Promise.all([store.getDictionary(projectId), store.getEvents(projectId), store.getArms(projectId), listQueries(db, { projectId, recordId })]);
      const rows = events.map(mask.record);
      return {
        recordId,
        events: rows,
        queries: queries.map(view.query),
        audit: await maskAuditEntries(db, mask, await store.listAudit(projectId, { entityType: 'record', entityId: recordId })),
        // The same masked rows and queries as above, shaped as a case report form (trial/record-view).
        crf: buildRecordCrf({ dictionary, schedule, arms, rows, queries }),
      };
    },
    audit: async (actor: User, projectId: string, filter: { entityType?: AuditEntityType; entityId?: string } = {}) => {
      await assertProjectReader(users, actor, projectId);
      const mask = await identifierMask(db, projectId, actor);
      return maskAuditEntries(db, mask, await store.listAudit(projectId, filter));
    },
    /**
     * Recomputes the project's audit hash chain. The head hash stays out of this answer: it is a hash over the
     * newest entry, whose masked identifier values a reader could otherwise guess against it (`clinagent audit verify` prints it).
     */
    verifyAudit: async (actor: User, projectId: string) => {
      await assertProjectReader(users, actor, projectId);
      const { headHash: _headHash, ...verification } = await verifyAuditChain(db, projectId);
      return verification;
    },
    /** Admin: lets a member of the project see identifier fields unmasked, or takes it back (audited). */
    setIdentifierAccess: async (actor: User, projectId: string, userId: string, canViewIdentifiers: unknown) => {
      if (actor.role !== 'admin') {
        throw new ClinAgentError('FORBIDDEN', `Only admins may grant access to identifier fields; your role is "${actor.role}". Ask an admin.`, { role: actor.role, needs: ['admin'] });
      }
      return setIdentifierAccess(db, { projectId, userId, canViewIdentifiers, actor: actor.name });
    },
  };
}

export type RecordService = ReturnType<typeof createRecordService>;
