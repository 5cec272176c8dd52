import { ingestScenarioDocuments } from './runtime/scenarios/ingest-documents.js';
import { requestUnfinishedScopeIndexes } from './runtime/scope-index-job.js';
import type { AppContext } from './context.js';
import { indexScopeQueue, ingestScenarioDocumentsQueue } from './core/jobs/queues.js';
import { registerAuditAnchorJob } from './core/audit/audit-anchor-job.js';
import { registerQcWorkers } from './trial/qc/workers.js';
import { registerSkillSchedules } from './trial/skills/skill-schedules.js';
import { registerMemoryWorkers } from './memory/index.js';

/**
 * Registers every queue handler. The server calls it (one process on PGlite does everything); on
 * PostgreSQL any number of `clinagent worker` processes may call it too and share the queues.
 */
export async function registerWorkers(ctx: AppContext): Promise<{ stop(): void }> {
  if (!ctx.jobs) throw new Error('registerWorkers needs a context created with startJobs: true');
  // Scheduled skills are registered by registerSkillSchedules, which follows activations without a restart.
  // On the embedded database this is the only process, so runs still leased by another owner are a dead one's.
  const exclusiveDatabase = ctx.database.engine === 'pglite';
  const qcWorkers = await registerQcWorkers({ ...ctx.trial.sop, jobs: ctx.jobs }, { concurrency: ctx.config.qc.concurrency, sweepIntervalMs: ctx.config.qc.sweepIntervalMs, staleMs: ctx.config.qc.staleMs, exclusiveDatabase });
  await registerSkillSchedules({ db: ctx.db, jobs: ctx.jobs, catalog: ctx.skills, logger: ctx.logger });
  await ctx.jobs.work(ingestScenarioDocumentsQueue, async ({ scenarioId }) => {
    if (!ctx.scenarios.has(scenarioId)) {
      ctx.logger.warn({ scenarioId }, 'document ingestion job for a scenario this process does not know; skipped');
      return;
    }
    const results = await ingestScenarioDocuments(ctx.rag, ctx.scenarios.get(scenarioId));
    ctx.logger.info({ scenarioId, documents: results.length, changed: results.filter((r) => !r.unchanged).length }, 'scenario documents ingested');
  });
  // Sent by requestScopeIndex (protocol documents, the consult knowledge base). indexScope is idempotent and
  // resumes a stopped build; a scope emptied meanwhile has nothing to index and the job just completes.
  await ctx.jobs.work(indexScopeQueue, async (scope) => {
    const status = await ctx.rag.indexScope(scope);
    ctx.logger.info({ collection: scope.collection, scenarioId: scope.scenarioId, state: status.state, chunks: status.chunks, indexedChunks: status.indexedChunks, steps: status.steps }, 'document scope search index built or extended');
  });
  await registerMemoryWorkers({ jobs: ctx.jobs, hot: ctx.memory.hot, reports: ctx.memory.reports, logger: ctx.logger, cron: { distill: ctx.config.memory.distillCron, weekly: ctx.config.memory.weeklyCron } });
  // Every durable agent run (definition runs, consults, staged agents): one queue and one orphan sweep, with the QC
  // run settings (one lease policy).
  const agentRunWorkers = await ctx.agentRunHost.start({ concurrency: ctx.config.qc.concurrency, sweepIntervalMs: ctx.config.qc.sweepIntervalMs, staleMs: ctx.config.qc.staleMs, exclusiveDatabase });
  await registerAuditAnchorJob({ jobs: ctx.jobs, db: ctx.db, logger: ctx.logger, webhookUrl: ctx.config.qc.reviewWebhookUrl, cron: ctx.config.audit.anchorCron });
  return {
    stop: () => {
      qcWorkers.stop();
      agentRunWorkers.stop();
    },
  };
}

/** Queues the ingestion of every scenario's shipped documents; cheap when nothing changed. */
export async function enqueueScenarioDocuments(ctx: AppContext): Promise<void> {
  if (!ctx.jobs || !ctx.hasVectorStore) return;
  for (const scenario of ctx.scenarios.list()) {
    if (scenario.rag.enabled && scenario.documents.length) await ctx.jobs.send(ingestScenarioDocumentsQueue, { scenarioId: scenario.id });
  }
}

/**
 * Queues the index build of each document scope that is large enough and not fully indexed: protocol documents, the
 * consult knowledge base and scenarios without shipped documents, after the 0016 upgrade, a stop between an upload
 * and its job, or any restart on the embedded database (its graphs live in memory). Scenarios that ship documents
 * are left to their ingest job (enqueueScenarioDocuments).
 */
export async function enqueueUnfinishedScopeIndexes(ctx: AppContext): Promise<void> {
  if (!ctx.jobs || !ctx.hasVectorStore) return;
  // Searches stay exact (complete) without these builds, so a failure here is worth a warning, not a failed start.
  // A scenario that ships documents gets its ingest job at every start (enqueueScenarioDocuments), which builds its
  // index; one whose documents were all uploaded gets a build here. In-process graphs (the embedded database) are
  // gone after every restart, so on PGlite every large scope is queued here or there.
  const hasIngestJob = (scenarioId: string) => {
    const scenario = ctx.scenarios.has(scenarioId) ? ctx.scenarios.get(scenarioId) : undefined;
    return scenario !== undefined && scenario.rag.enabled && scenario.documents.length > 0;
  };
  const requested = await requestUnfinishedScopeIndexes({ rag: ctx.rag, jobs: ctx.jobs }, { skip: (scope) => hasIngestJob(scope.scenarioId) }).catch((error: unknown) => {
    ctx.logger.warn({ err: error }, 'could not queue the search index builds of unindexed document scopes; they are searched exactly until their next upload or start');
    return [];
  });
  if (requested.length) ctx.logger.info({ scopes: requested.length }, 'document scope search index builds queued');
}
