import { assertProjectReader } from '../../core/auth/project-access.js';
import type { MembershipCheck } from '../../core/auth/membership.js';
import type { User } from '../../core/auth/users.js';
import type { Db } from '../../core/db/connect.js';
import { identifierMask } from '../identifiers.js';
import { reportToCsv, reportToXlsx } from './export.js';
import { createRuleYieldReader } from './rule-yield-reader.js';
import { buildViolationsReport } from './violations-report.js';

/**
 * A trial's reports as its members read them: the violations report (JSON, CSV, XLSX), identifier values masked
 * unless the reader may see them, and the yield of each rule (counts only). A non-member gets NOT_FOUND.
 */
export function createReportService(deps: { db: Db; users: MembershipCheck }) {
  const { db, users } = deps;

  async function maskedReport(projectId: string, user: User) {
    const [report, mask] = await Promise.all([buildViolationsReport(db, projectId), identifierMask(db, projectId, user)]);
    return { ...report, rows: report.rows.map(mask.reportRow) };
  }

  return {
    violations: async (actor: User, projectId: string) => {
      await assertProjectReader(users, actor, projectId);
      return maskedReport(projectId, actor);
    },
    violationsCsv: async (actor: User, projectId: string) => {
      await assertProjectReader(users, actor, projectId);
      return reportToCsv(await maskedReport(projectId, actor));
    },
    violationsXlsx: async (actor: User, projectId: string) => {
      await assertProjectReader(users, actor, projectId);
      return reportToXlsx(await maskedReport(projectId, actor));
    },
    ruleYield: createRuleYieldReader(deps).ruleYield,
  };
}

export type ReportService = ReturnType<typeof createReportService>;
