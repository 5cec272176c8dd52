/**
 * The ClinAgent library. Everything the server uses is importable from here, so scripts, notebooks and
 * other services can run the same engines: `import { runAgent, loadScenario } from 'clinagent'`.
 */
export { runAgent, type AgentDeps, type RunAgentOptions } from './agent/run-agent.js';
export type { AgentResult } from './agent/result.js';
export { loadScenario, loadScenarios, type Scenario } from './agent/scenarios/load.js';
export { createScenarioCatalog, type ScenarioCatalog } from './agent/scenarios/catalog.js';
export { ingestScenarioDocuments } from './agent/scenarios/ingest-documents.js';
export { registerBuiltinTools, calculateRateTool, queryDemoRecordsTool, checkRequiredFieldsTool, generateActionItemsTool } from './agent/tools/builtin.js';
export { calculateSampleSize, calculateSampleSizeTool, SampleSizeInputSchema, type SampleSizeInput, type SampleSizeResult } from './agents/protocol/sample-size/index.js';
export { loadDemoRecords, type DemoRecord, type DemoRecordSet } from './agent/tools/demo-records.js';
export { createRunStore, DEFAULT_LEASE_MS, type Decision, type RunUpdate, type RunStoreHooks } from './agent/runs/run-store.js';
export { createAgentRunStore, type AgentRun, type AgentRunOptions } from './agent/runs/agent-runs.js';
export { createStepDriver, type StepDriver, type NodeHandlers, type NodeResult } from './agent/runs/step-driver.js';
export { createAgentRunService, type AgentRunService } from './agent/runs/agent-run-service.js';
export { createAgentRegistry, validateDefinition, type AgentRegistry, type AgentDefinition, type DecisionSpec, type EngineSpec, type StopSettings, type StageDefinition } from './agent/definitions/index.js';
export { createEngines, type AgentEngine, type AgentEngines, type EngineRunOptions } from './agent/engines/index.js';
export { runLoop, readDecision, type AgentEvent, type AgentEventSink, type LoopOutcome } from './agent/loop/index.js';
export { runDefinition } from './agent/loop/run-definition.js';
export { completeOnce } from './agent/loop/one-shot.js';
export { createContext, closeContext, type AppContext, type CreateContextOptions } from './context.js';
export { startServer, type RunningServer, type StartServerOptions } from './main.js';
export { buildServer } from './http/server.js';
export { loadConfig, type Config, type LlmConfig, type EmbeddingConfig } from './core/config.js';
export { ClinAgentError, type ErrorCode } from './core/errors.js';
export { createLogger, type Logger } from './core/logger.js';
export { openDatabase, type Database, type Db } from './core/db/connect.js';
export { runMigrations } from './core/db/migrate.js';
export { createJobs, type Jobs } from './core/jobs/boss.js';
export { defineQueue, type QueueDef } from './core/jobs/queues.js';
export { createLlmGateway, type LlmGateway } from './core/llm/gateway.js';
export type { ChatMessage, ChatRequest, ChatResponse, ToolSpec, TokenUsage } from './core/llm/types.js';
export { imagePart, textPart } from './core/llm/types.js';
export { countTokens, trimToTokens, fitToBudget } from './core/tokenizer.js';
export { createTraceStore, type TraceStore, type TraceScope, type TraceRun, type TraceView } from './core/trace/store.js';
export { createToolRegistry, type ToolRegistry, type ToolDefinition, type ToolCallResult } from './core/tools/registry.js';
export { parseStructuredOutput, type ParseResult } from './core/structured/parse.js';
export { BUILTIN_OUTPUT_TYPES, type OutputType } from './core/structured/output-types.js';
export { createAuthStores, type AuthStores } from './core/auth/auth-stores.js';
export { createUserStore, type UserStore, type User } from './core/auth/users.js';
export type { MembershipCheck, MembershipStore } from './core/auth/membership.js';
export * from './rag/index.js';

// Trial quality control (seed 000).
export { compileRules, createRuleEngine, type HardRule, type Violation, type CompiledRules } from './trial/rules/index.js';
export { runWithRetry, NEEDS_HUMAN_REVIEW, type SoftRuleResult } from './trial/soft/index.js';
export { loadSkill, loadSkills, type Skill } from './trial/sop/load-skills.js';
export { createSkillCatalog, type SkillCatalog } from './trial/sop/skill-catalog.js';
export { advanceTaskRun, resumeTaskRun, type SopDeps } from './trial/sop/engine.js';
export { createWebhookNotifier, type ReviewNotifier } from './trial/sop/notify.js';
export { startQcRun, getQcProgress, type QcProgress } from './trial/qc/qc-runs.js';
export { registerQcWorkers, reviewTaskRun, nextCronRun } from './trial/qc/workers.js';
export { listQueries, transitionQuery, type DataQuery } from './trial/queries.js';
export { buildViolationsReport } from './trial/report/violations-report.js';
export { reportToCsv, reportToXlsx } from './trial/report/export.js';
export { verifyAuditChain, listAuditChains, type AuditChainVerification } from './core/audit/verify-audit-chain.js';
export { auditKeyFromSecret, type AuditKey } from './core/audit/audit-key.js';
export { createTrialStore, type TrialStore } from './trial/store/trial-store.js';
export { importRedcapCsv } from './trial/import/import-redcap-csv.js';
export { createRedcapClient } from './trial/redcap/client.js';
export { importFromRedcap } from './trial/redcap/import-from-redcap.js';
export { loadDemoTrial, ensureDemoTrial } from './trial/demo/load-demo-trial.js';
export { createTrialQc, type TrialQc } from './trial/trial-qc.js';
