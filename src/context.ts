import { registerBuiltinTools } from './demo-tools/builtin.js';
import { calculateSampleSizeTool } from './agents/protocol/sample-size/index.js';
import { loadDemoRecords } from './demo-tools/demo-records.js';
import type { ScenarioCatalog } from './runtime/scenarios/catalog.js';
import { openScenarios } from './runtime/scenarios/open-scenarios.js';
import { createAgentRegistry, type AgentRegistry } from './runtime/definitions/index.js';
import { builtinAgentDefinitions } from './builtin-agents.js';
import { createConversationStore, type ConversationStore } from './runtime/conversations/index.js';
import { createEngines, type AgentEngines } from './runtime/engines/index.js';
import { createAgentRunService, newRunWorkerId, type AgentRunService } from './runtime/runs/agent-run-service.js';
import { createRunHost, type RunHost } from './runtime/runs/run-host.js';
import { loadStagedConfigFile } from './runtime/staged/config-file.js';
import { createConfigStore, type ConfigStore } from './runtime/staged/config-store.js';
import { stagedAgentDefinition } from './runtime/staged/stage-definition.js';
import { createStagedAgentService, type StagedAgentService } from './runtime/staged/staged-agent-service.js';
import { validateStagedConfig } from './runtime/staged/validate-config.js';
import { protocolAgentConfigFile } from './agents/protocol/protocol-agent.js';
import { PROTOCOL_VALIDATORS } from './agents/protocol/validators.js';
import { createConsultService, type ConsultService } from './agents/consult/consult-service.js';
import { CONSULT_DEFINITION } from './agents/consult/definition.js';
import { createVisionGateway } from './agents/consult/image/index.js';
import { createMedicalKnowledgeTool, ingestConsultKnowledge } from './agents/consult/knowledge/index.js';
import { searchMedicationTool } from './agents/consult/medication/index.js';
import { assessRiskTool } from './agents/consult/risk/index.js';
import { createAuthStores, type AuthStores } from './core/auth/auth-stores.js';
import { claimAuditChainKey } from './core/audit/audit-chain-key.js';
import { loadAuditKey } from './core/audit/load-audit-key.js';
import type { Config } from './core/config.js';
import { openDatabase, type Database, type Db } from './core/db/connect.js';
import { hasVectorStore, migrateDatabase } from './core/db/migrate.js';
import { createJobs, type Jobs } from './core/jobs/boss.js';
import { createLlmGateway, type LlmGateway } from './core/llm/gateway.js';
import { createLogger, loggerSecrets, type Logger } from './core/logger.js';
import { createSecretRegistry, type SecretRegistry } from './core/secrets.js';
import { createToolRegistry, type ToolRegistry } from './core/tools/registry.js';
import { createTraceStore, type TraceStore } from './core/trace/store.js';
import type { TelemetryExport } from './core/telemetry/otel-export.js';
import { withoutIdentifiers } from './agents/consult/safety/identifiers.js';
import { VERSION } from './version.js';
import { openSkills } from './trial/skills/open-skills.js';
import type { StoredSkillCatalog } from './trial/skills/stored-skill-catalog.js';
import { createTrialServices, type TrialServices } from './trial/trial-services.js';
import { createEmbedder, createRagStore, loadGraphLibrary, type Embedder, type RagStore } from './rag/index.js';
import { createProjectMemory, type ProjectMemory } from './memory/index.js';
import { openMcpServers, type McpServers } from './mcp/client/index.js';

/** Built once at start-up and handed to every area; per-request values are arguments, never fields here. */
export interface AppContext {
  config: Config;
  logger: Logger;
  database: Database;
  db: Db;
  jobs?: Jobs;
  llm: LlmGateway;
  embedder: Embedder;
  tools: ToolRegistry;
  /** MCP servers the administrator configured (MCP_SERVERS_FILE), whose tools are in `tools`; closed with the context. */
  mcp: McpServers;
  trace: TraceStore;
  /** The OpenTelemetry export of traces (docs/telemetry.md), when OTEL_EXPORTER_OTLP_ENDPOINT is set; closeContext flushes it. */
  telemetry?: TelemetryExport;
  rag: RagStore;
  users: AuthStores;
  /** The raw log of agent conversations (user, assistant and tool turns); access checked inside. */
  conversations: ConversationStore;
  /** Project memory (seed 002): hot memory, weekly reports, answer feedback, user profiles; access checked inside. */
  memory: ProjectMemory;
  /**
   * Values masked in every log line and trace: the configured keys and tokens, plus whatever code adds at
   * run time (`ctx.secrets.add(process.env[tokenEnv])` when it reads a REDCap token by name).
   */
  secrets: SecretRegistry;
  scenarios: ScenarioCatalog;
  /** Every agent by id: the scenarios and the agents declared in code, each validated at start-up. */
  agents: AgentRegistry;
  /** What runs each scenario, by its `engine.type`: the one loop, or a Dify app (seed 004 section 11). */
  engines: AgentEngines;
  /** Durable runs of scenarios that can wait for a person (POST /api/agent/runs); advanced by job workers. */
  agentRuns: AgentRunService;
  /** The one queue and sweep of every durable agent run (definition runs, consults, staged agents), by kind. */
  agentRunHost: RunHost;
  /** Staged agents' configurations (seed 001), versioned in the database, seeded from agents/*.yaml. */
  agentConfigs: ConfigStore;
  /** Conversations of staged agents (the Protocol Agent): one durable run each, waiting for input between messages. */
  stagedAgents: StagedAgentService;
  /** Dermatology consults (seed 003): one durable run each, waiting for the patient between messages. */
  consult: ConsultService;
  /** QC skills, versioned in the database (seeded from SKILLS_DIR); activated versions serve without a restart. */
  skills: StoredSkillCatalog;
  /** The trial area's services (imports, REDCap, records, skills, QC runs, queries, reports, protocol documents...), built once. */
  trial: TrialServices;
  /** False on a PostgreSQL without pgvector: RAG calls then fail with VECTOR_STORE_UNAVAILABLE. */
  hasVectorStore: boolean;
}

export interface CreateContextOptions {
  logger?: Logger;
  /** Start pg-boss (server and worker processes); off for one-shot CLI commands. */
  startJobs?: boolean;
  /** Use this database instead of opening one from config (tests). */
  database?: Database;
}

export async function createContext(config: Config, options: CreateContextOptions = {}): Promise<AppContext> {
  // The logger's own registry when it has one, so what is added at run time is masked in its lines too.
  const loggerRegistry = options.logger ? loggerSecrets(options.logger) : undefined;
  const secrets = loggerRegistry ?? createSecretRegistry();
  secrets.add(config.llm.apiKey, config.embedding.apiKey, config.vision.apiKey, config.adminToken, config.audit.key);
  const logger = options.logger ?? createLogger(config.logLevel, undefined, { secrets });
  const tools = createToolRegistry();
  registerBuiltinTools(tools, loadDemoRecords());
  // Here rather than in registerBuiltinTools: src/runtime may not import an agent of src/agents.
  tools.register(calculateSampleSizeTool());
  tools.register(assessRiskTool());
  tools.register(searchMedicationTool());
  // Tools of the configured MCP servers join the registry before scenarios name them (a server that is down is logged).
  const mcp = await openMcpServers(config.mcp, { env: process.env, secrets, logger, clientVersion: VERSION });
  mcp.register(tools);
  // Scenarios are checked before the database opens; an invalid file is logged with all its problems and not
  // served, the others are (GET /api/scenarios lists both).
  const scenarios = openScenarios({ directory: config.scenariosDir, policy: { difyAllowHttp: config.dify.allowHttp, difyAllowedHosts: config.dify.allowedHosts, mcp }, tools, logger });
  // Staged agents' configurations are checked like definitions: every problem named with its stage and field.
  const validators = { ...PROTOCOL_VALIDATORS };
  const validateConfig = (raw: unknown, source: string) => validateStagedConfig(raw, { toolNames: new Set(tools.list().map((t) => t.name)), validators: new Set(Object.keys(validators)), source });
  const protocolFile = protocolAgentConfigFile();
  const protocolSeed = loadStagedConfigFile(protocolFile, validateConfig);
  // An agent that cannot run as declared stops start-up, naming its file and field.
  const agents = createAgentRegistry(tools);
  agents.registerAll([...builtinAgentDefinitions(), stagedAgentDefinition(protocolSeed, protocolFile), ...scenarios.list()]);
  const auditKey = options.database ? undefined : await loadAuditKey(config.audit, { createIfMissing: true });
  const database = options.database ?? (await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, auditKey: auditKey?.key }));
  try {
    await migrateDatabase(database, config.databaseMigrationUrl);
    if (database.auditKey) await claimAuditChainKey(database.db, database.auditKey);
    if (auditKey?.legacy) logger.warn({ file: auditKey.legacy.file, moveTo: auditKey.legacy.moveTo }, 'read the audit key from the working folder (where older versions kept it on PostgreSQL, and where the built-in database keeps it beside its data before a db copy); move it to moveTo, or set AUDIT_KEY_FILE to where you keep it');
    if (auditKey?.createdFile) logger.warn({ file: auditKey.createdFile }, 'created the audit trail key file; back it up now, apart from the database: without it the audit trail can no longer be verified (docs/audit-trail.md)');
    const vectorStore = await hasVectorStore(database.db);
    if (!vectorStore) logger.warn('this PostgreSQL has no pgvector extension: RAG is unavailable until it is installed');
    const embedder = createEmbedder(config.embedding, config.llm);
    const jobs = options.startJobs ? await createJobs(database, logger) : undefined;
    const llm = createLlmGateway(config.llm);
    const users = createAuthStores(database.db, { tokenTtlDays: config.tokenTtlDays });
    // Imported only when an OTLP endpoint is set: without one no OpenTelemetry code is loaded and nothing is sent.
    // Captured content goes through the same identifier masker as the consult's traces (the one masker of free content).
    const telemetry = config.telemetry ? (await import('./core/telemetry/otel-export.js')).openTelemetryExport(config.telemetry, { logger, secrets, withoutIdentifiers: (value) => withoutIdentifiers(value), serviceVersion: VERSION }) : undefined;
    const trace = createTraceStore(database.db, { secrets, logger, exporter: telemetry });
    const conversations = createConversationStore({ db: database.db, users, llm, agents });
    const memory = createProjectMemory({ db: database.db, llm, agents, trace, logger, users, conversations, config: { hotMaxTokens: config.memory.hotMaxTokens, historyWeeks: config.memory.historyWeeks } });
    // Agent runs share the QC run settings (QC_LEASE_MS, QC_SWEEP_INTERVAL_MS, QC_STALE_MS): one driver, one lease policy.
    const agentRunHost = createRunHost({ db: database.db, jobs, logger });
    const agentRuns = createAgentRunService({ db: database.db, host: agentRunHost, llm, tools, trace, logger, workerId: newRunWorkerId(), leaseMs: config.qc.leaseMs, definitions: agents, conversations, users });
    const rag = createRagStore({ db: database.db, embedder, inProcessGraphs: config.ragScopeIndex === 'in-process' });
    const graphLibrary = config.ragScopeIndex === 'in-process' && database.engine === 'pglite' ? loadGraphLibrary() : {};
    if (graphLibrary.error) {
      logger.warn({ reason: graphLibrary.error }, 'in-process search graphs unavailable (usearch did not load on this platform): large document scopes are indexed by pgvector inside the embedded database, 2 to 3 times slower; set RAG_SCOPE_INDEX=pgvector to silence this');
    }
    // The knowledge tool reads the RAG store, which needs the database: the consult joins the registry here.
    tools.register(createMedicalKnowledgeTool(rag));
    agents.register(CONSULT_DEFINITION);
    let knowledgeReady: Promise<unknown> | undefined;
    const consult = createConsultService({
      db: database.db, host: agentRunHost, llm, tools, agents, trace, logger, workerId: newRunWorkerId(), leaseMs: config.qc.leaseMs, conversations, users,
      vision: createVisionGateway(config), maxImageBytes: config.vision.maxImageBytes, tokenBudget: config.consult.tokenBudget,
      // The shipped articles are ingested once per process before the first consult turn (unchanged ones are not
      // embedded again); without pgvector the knowledge tool says so and the consult goes on without it.
      prepare: () => (knowledgeReady ??= vectorStore ? ingestConsultKnowledge(rag, { jobs }).catch((error) => { knowledgeReady = undefined; logger.warn({ err: String(error) }, 'consult knowledge base could not be ingested'); }) : Promise.resolve()),
    });
    const agentConfigs = createConfigStore({ db: database.db, validate: validateConfig });
    const seeded = await agentConfigs.seed(protocolSeed, protocolFile);
    // debug: one-shot CLI commands print their output on stdout, where an info line at every first start would mix in.
    if (seeded.seeded) logger.debug({ agentId: protocolSeed.agentId, version: seeded.stored.version, fileVersion: protocolSeed.version }, 'staged agent configuration seeded from its file');
    // One invalid skill file is logged and left inactive; it does not stop the other trials' QC.
    const skills = await openSkills({ db: database.db, tools, logger, directory: config.skillsDir });
    const stagedAgents = createStagedAgentService({ db: database.db, host: agentRunHost, llm, tools, trace, logger, workerId: newRunWorkerId(), leaseMs: config.qc.leaseMs, configs: agentConfigs, validators, conversations, users, agents });
    return {
      config,
      logger,
      database,
      db: database.db,
      jobs,
      llm,
      embedder,
      tools,
      mcp,
      trace,
      telemetry,
      rag,
      users,
      conversations,
      memory,
      secrets,
      scenarios,
      agents,
      engines: createEngines({ dify: { secrets, allowedHosts: config.dify.allowedHosts }, openaiAgents: { llm: config.llm } }),
      agentRuns,
      agentRunHost,
      agentConfigs,
      stagedAgents,
      consult,
      skills,
      hasVectorStore: vectorStore,
      trial: createTrialServices({ config, db: database.db, jobs, llm, tools, trace, agents, logger, users, secrets, skills, rag, hasVectorStore: vectorStore }),
    };
  } catch (error) {
    if (!options.database) await database.close();
    await mcp.close();
    throw error;
  }
}

/** pg-boss first (it may still be finishing a job that writes), then the trace spans still queued, then the database. */
export async function closeContext(ctx: AppContext, options: { keepDatabase?: boolean } = {}): Promise<void> {
  await ctx.jobs?.stop();
  await ctx.mcp.close();
  ctx.skills.close();
  await ctx.trace.close();
  // After the trace store, whose last steps end their spans; never throws, and bounded by OTEL_EXPORTER_OTLP_TIMEOUT.
  await ctx.telemetry?.shutdown();
  if (!options.keepDatabase) await ctx.database.close();
}
