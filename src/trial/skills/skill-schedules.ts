import type { Db } from '../../core/db/connect.js';
import { trialRecords } from '../../core/db/schema/trial.js';
import { errorMessage } from '../../core/errors.js';
import type { Jobs } from '../../core/jobs/boss.js';
import type { Logger } from '../../core/logger.js';
import { startQcRun } from '../qc/qc-runs.js';
import { cronQueue, cronQueueName } from '../qc/queues.js';
import type { Skill } from '../sop/load-skills.js';
import type { StoredSkillCatalog } from './stored-skill-catalog.js';

const CRON_PREFIX = cronQueueName('');

/**
 * Scheduled QC follows the active skill versions: at start and after every change the catalog sees (an activation
 * here, or another process's on the catalog's poll) each scheduled skill has a worker for its cron queue and a
 * pg-boss schedule with its cron, and a schedule whose skill lost its cron (or is no longer active) is removed.
 * pg-boss keeps schedules in the shared database, so every process converges on the same rows; writing the same
 * cron again is harmless.
 */
export async function registerSkillSchedules(deps: {
  db: Db;
  jobs: Jobs;
  catalog: Pick<StoredSkillCatalog, 'list' | 'onChange'>;
  logger: Pick<Logger, 'error' | 'info'>;
}): Promise<{ sync(): Promise<void> }> {
  const { jobs, catalog } = deps;
  const working = new Set<string>();

  async function sync(): Promise<void> {
    const wanted = new Map(catalog.list().filter((s) => s.schedule).map((s) => [cronQueueName(s.id), s]));
    const existing = new Map((await jobs.schedules()).filter((s) => s.queue.startsWith(CRON_PREFIX)).map((s) => [s.queue, s.cron]));
    for (const [queueName, skill] of wanted) {
      const queue = cronQueue(skill.id);
      if (!working.has(queueName)) {
        working.add(queueName);
        await jobs.work(queue, async ({ skillId }) => {
          // The tick runs the skill as it is now: a cron removed or a skill retired since the tick was queued runs nothing.
          const current = catalog.list().find((s) => s.id === skillId);
          if (!current?.schedule) return;
          await runScheduledSkill(deps, current);
        });
      }
      if (existing.get(queueName) !== skill.schedule) {
        await jobs.schedule(queue, skill.schedule!, { skillId: skill.id });
        deps.logger.info({ skillId: skill.id, version: skill.version, cron: skill.schedule }, 'scheduled QC of the skill registered');
      }
    }
    for (const queueName of existing.keys()) {
      if (wanted.has(queueName)) continue;
      await jobs.unschedule(queueName);
      deps.logger.info({ queue: queueName }, 'schedule of a skill without a cron (or no longer active) removed');
    }
  }

  catalog.onChange(async () => {
    try {
      await sync();
    } catch (error) {
      deps.logger.error({ err: errorMessage(error) }, 'skill schedules could not be brought up to date; retried on the next change');
    }
  });
  await sync();
  return { sync };
}

/** One tick: a QC run of the skill in each of its projects (every project with records for a skill for all). */
async function runScheduledSkill(deps: { db: Db; jobs: Jobs; logger: Pick<Logger, 'error'> }, skill: Skill): Promise<void> {
  const projects = skill.projects ?? (await deps.db.selectDistinct({ projectId: trialRecords.projectId }).from(trialRecords)).map((r) => r.projectId);
  for (const projectId of projects) {
    try {
      await startQcRun(deps, { projectId, skill, actor: 'cron', trigger: 'cron' });
    } catch (error) {
      deps.logger.error({ skillId: skill.id, projectId, err: errorMessage(error) }, 'scheduled QC run could not start');
    }
  }
}
