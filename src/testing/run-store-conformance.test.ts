import { agentRuns } from '../core/db/schema/runs.js';
import { projects } from '../core/db/schema/auth.js';
import { taskRuns } from '../core/db/schema/trial.js';
import { createJobs } from '../core/jobs/boss.js';
import { createLogger } from '../core/logger.js';
import { definitionRunStore, kindOf } from '../runtime/runs/definition-runs.js';
import { taskRunStore } from '../trial/sop/task-runs.js';
import { describeRunStoreConformance } from './run-store-conformance.js';
import { openTestDatabase } from './test-database.js';

const PROJECT = 'run-store-conformance';

/** A fresh database of the engine with pg-boss on it; closed in reverse. */
async function openWithJobs(engine: 'pglite' | 'postgres') {
  const database = await openTestDatabase({ engine });
  const jobs = await createJobs(database, createLogger('silent'), { supervise: false, schedule: false });
  return {
    database,
    jobs,
    async close() {
      await jobs.stop();
      await database.close();
    },
  };
}

// The QC's task runs: a table of their own, batch commits (advanceTaskRuns), decisions that settle held queries.
describeRunStoreConformance({
  name: 'the task-run store (QC)',
  batchCommits: true,
  sharedTable: false,
  async open(engine) {
    const { database, jobs, close } = await openWithJobs(engine);
    await database.db.insert(projects).values({ id: PROJECT, name: 'Run store conformance' });
    let records = 0;
    return {
      store: taskRunStore,
      db: database.db,
      jobs,
      decisionExtra: { onRejectQueries: 'close' as const },
      async createRun(node) {
        const [row] = await database.db.insert(taskRuns).values({ projectId: PROJECT, skillId: 'conformance', recordId: `R${++records}`, status: 'PENDING', currentNode: node }).returning();
        return row!;
      },
      close,
    };
  },
});

// Durable runs of declared agents: rows of agent_runs of kind `agent:*`, beside the consults and staged agents.
describeRunStoreConformance({
  name: 'the definition-run store (agent runs)',
  batchCommits: false,
  sharedTable: true,
  async open(engine) {
    const { database, jobs, close } = await openWithJobs(engine);
    const insert = async (kind: string, node: string) => {
      const [row] = await database.db.insert(agentRuns).values({ kind, status: 'PENDING', currentNode: node, state: { input: 'conformance', messages: [] } }).returning();
      return row!;
    };
    return {
      store: definitionRunStore,
      db: database.db,
      jobs,
      decisionExtra: {},
      createRun: (node) => insert(kindOf('conformance'), node),
      createForeignRun: (node) => insert('consult:conformance', node),
      close,
    };
  },
});
