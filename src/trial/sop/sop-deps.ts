import type { AgentRegistry } from '../../runtime/definitions/index.js';
import type { Config } from '../../core/config.js';
import type { Db } from '../../core/db/connect.js';
import type { Jobs } from '../../core/jobs/boss.js';
import type { LlmGateway } from '../../core/llm/gateway.js';
import type { Logger } from '../../core/logger.js';
import type { ToolRegistry } from '../../core/tools/registry.js';
import type { TraceStore } from '../../core/trace/store.js';
import { queueReviewNotice } from '../qc/review-notices.js';
import { newWorkerId } from '../qc/workers.js';
import type { SopDeps } from './engine.js';
import { createWebhookNotifier } from './notify.js';
import type { SkillCatalog } from './skill-catalog.js';

export interface SopDepsInput {
  config: Pick<Config, 'host' | 'port' | 'qc'>;
  db: Db;
  /** Without a job queue (one-shot CLI commands) no review notice is queued when a run suspends. */
  jobs?: Jobs;
  llm: LlmGateway;
  tools: ToolRegistry;
  trace: TraceStore;
  /** The registry the soft-rule judge is resolved from. */
  agents: Pick<AgentRegistry, 'get'>;
  logger: Logger;
  skills: Pick<SkillCatalog, 'get'>;
}

/**
 * What the SOP engine and the QC job workers run with, for this process: they act for the system (a run someone
 * started, or cron), not for a user. One worker id per process, unless a test names the worker it plays.
 */
export function createSopDeps(deps: SopDepsInput, workerId = newWorkerId()): SopDeps {
  return {
    db: deps.db,
    llm: deps.llm,
    tools: deps.tools,
    trace: deps.trace,
    agents: deps.agents,
    logger: deps.logger,
    notifier: createWebhookNotifier(deps.config.qc.reviewWebhookUrl, { publicUrl: `http://${deps.config.host}:${deps.config.port}` }),
    queueReviewNotice: deps.jobs ? queueReviewNotice(deps.jobs) : undefined,
    workerId,
    leaseMs: deps.config.qc.leaseMs,
    // A run created with a stored skill version keeps it (task_runs.skill_version) when another one is activated.
    skill: (id: string, version?: number) => deps.skills.get(id, version),
  };
}
