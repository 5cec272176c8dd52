import { agentRuns } from '../core/db/schema/runs.js';
import { projects } from '../core/db/schema/auth.js';
import { taskRuns } from '../core/db/schema/trial.js';
import { createJobs } from '../core/jobs/boss.js';
import { createLogger } from '../core/logger.js';
import { createConversationRunStore } from '../runtime/runs/conversation-runs.js';
import { definitionRunStore, kindOf } from '../runtime/runs/definition-runs.js';
import { createRunHost } from '../runtime/runs/run-host.js';
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

/** A conversation family's store (createConversationRunStore), as the consult and the staged agents open it. */
function describeConversationFamily(kindPrefix: string, label: string) {
  describeRunStoreConformance({
    name: `the conversation-run store of ${kindPrefix}* (${label})`,
    // A step saves the agent's state with the run, which commitSteps does not carry: one step at a time.
    batchCommits: false,
    sharedTable: true,
    async open(engine) {
      const { database, jobs, close } = await openWithJobs(engine);
      const insert = async (kind: string, node: string) => {
        const [row] = await database.db.insert(agentRuns).values({ kind, status: 'PENDING', currentNode: node, state: { traceIds: [], updatedAt: new Date().toISOString() } }).returning();
        return row!;
      };
      return {
        store: createConversationRunStore({ kindPrefix, label }),
        db: database.db,
        jobs,
        decisionExtra: {},
        createRun: (node) => insert(`${kindPrefix}conformance`, node),
        // Another conversation family's run, and a definition run, in the same table.
        createForeignRun: async (node) => (await Promise.all([insert(kindPrefix === 'consult:' ? 'staged:conformance' : 'consult:conformance', node), insert(kindOf('conformance'), node)]))[0],
        close,
      };
    },
  });
}
describeConversationFamily('consult:', 'Consult');
describeConversationFamily('staged:', 'Conversation');

// The run host's own store, the one its sweep reads: every registered family's runs, and no one else's.
describeRunStoreConformance({
  name: "the run host's sweep store",
  batchCommits: true,
  sharedTable: true,
  async open(engine) {
    const { database, jobs, close } = await openWithJobs(engine);
    const host = createRunHost({ db: database.db, jobs, logger: createLogger('silent') });
    for (const prefix of ['first-family:', 'second-family:']) host.register({ prefix, label: prefix, advance: async () => undefined });
    let created = 0;
    const insert = async (kind: string, node: string) => {
      const [row] = await database.db.insert(agentRuns).values({ kind, status: 'PENDING', currentNode: node }).returning();
      return row!;
    };
    return {
      store: host.sweepStore(),
      db: database.db,
      jobs,
      decisionExtra: {},
      // Runs of both families, in turn: the store's scope covers each.
      createRun: (node) => insert(`${++created % 2 ? 'first' : 'second'}-family:conformance`, node),
      createForeignRun: (node) => insert('unregistered:conformance', node),
      close,
    };
  },
});
