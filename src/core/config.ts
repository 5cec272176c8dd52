import path from 'node:path';
import { z } from 'zod';
import { defaultAuditKeyFile } from './audit/audit-key-location.js';
import { ClinAgentError } from './errors.js';
import { telemetryConfig, type TelemetryConfig } from './telemetry/otel-config.js';

/**
 * Every setting comes from the environment and is validated once at start-up. All problems are reported
 * together, each naming the variable, what is wrong and an example of a good value.
 */
const optionalString = z
  .string()
  .trim()
  .transform((value) => (value === '' ? undefined : value))
  .optional();

/** A comma-separated list of host names or IP addresses the administrator allows although they are not public. */
function hostList(example: string) {
  return optionalString
    .transform((value) => (value ?? '').split(',').map((host) => host.trim().toLowerCase().replace(/^\[|\]$/g, '')).filter(Boolean))
    .pipe(z.array(z.string().regex(/^[a-z0-9._:-]+$/, { message: `must be host names or IP addresses separated by commas, without scheme, port or path, e.g. "${example}"` })));
}

const optionalUrl = optionalString.refine((value) => value === undefined || isHttpUrl(value), {
  message: 'must be an http(s) URL, e.g. http://127.0.0.1:8000/v1',
});

/**
 * How soon a durable run left by a killed process is taken over, by default: the one source of QC_LEASE_MS,
 * QC_SWEEP_INTERVAL_MS and QC_STALE_MS's defaults, which the run store and the QC workers fall back on too.
 */
export const RUN_RECOVERY_DEFAULTS: Readonly<{ leaseMs: number; sweepIntervalMs: number; staleMs: number }> = { leaseMs: 6_000, sweepIntervalMs: 2_000, staleMs: 3_000 };

const positiveInt = (fallback: number, example: string) =>
  optionalString
    .refine((value) => value === undefined || /^\d+$/.test(value), { message: `must be a whole number, e.g. ${example}` })
    .transform((value) => (value === undefined ? fallback : Number(value)));

const cron = (fallback: string) =>
  optionalString
    .refine((value) => value === undefined || /^(\S+\s+){4}\S+$/.test(value.trim()), { message: `must be a 5-field cron expression (UTC), e.g. "${fallback}"` })
    .transform((value) => value?.trim() ?? fallback);

const envSchema = z.object({
  LLM_API_KEY: optionalString,
  LLM_BASE_URL: optionalUrl,
  LLM_MODEL: optionalString,
  LLM_TIMEOUT_MS: positiveInt(60_000, '60000'),
  LLM_MAX_RETRIES: positiveInt(2, '2'),
  EMBEDDING_API_KEY: optionalString,
  EMBEDDING_BASE_URL: optionalUrl,
  EMBEDDING_MODEL: optionalString,
  // The consult's image analysis (seed 003): absent VISION_MODEL means no vision, and the consult asks for a description instead.
  VISION_API_KEY: optionalString,
  VISION_BASE_URL: optionalUrl,
  VISION_MODEL: optionalString,
  // Phone photos are 2-4 MB; larger images cost the vision model more tokens without showing a lesion better.
  CONSULT_IMAGE_MAX_BYTES: positiveInt(5 * 1024 * 1024, '5242880').refine((n) => n >= 1024, { message: 'must be at least 1024 (bytes per consult image)' }),
  // Seed 003 section 8: a ceiling on what one consult may cost; a consult that reaches it says so and stops.
  CONSULT_TOKEN_BUDGET: positiveInt(200_000, '200000').refine((n) => n >= 1000, { message: 'must be at least 1000 (tokens per consult)' }),
  DATABASE_URL: optionalString.refine((value) => value === undefined || /^postgres(ql)?:\/\//.test(value), {
    message: 'must be a PostgreSQL connection URL, e.g. postgres://user:pass@127.0.0.1:5432/clinagent',
  }),
  DATABASE_MIGRATION_URL: optionalString.refine((value) => value === undefined || /^postgres(ql)?:\/\//.test(value), {
    message: 'must be a PostgreSQL connection URL of the owner role, e.g. postgres://clinagent_owner:pass@127.0.0.1:5432/clinagent',
  }),
  HOST: optionalString.transform((value) => value ?? '127.0.0.1'),
  PORT: positiveInt(3000, '3000').refine((port) => port <= 65_535, { message: 'must be between 0 and 65535' }),
  DATA_DIR: optionalString,
  // Where the embedded database keeps large document scopes' search indexes (docs/rag.md): in-process graphs in the
  // server's memory (fast; rebuilt in the background after each start) or pgvector's HNSW inside PGlite (kept on
  // disk, 2 to 3 times slower to search, 5 times slower to extend). A server database always uses pgvector.
  RAG_SCOPE_INDEX: optionalString.transform((value) => value ?? 'in-process').pipe(
    z.enum(['in-process', 'pgvector'], { message: "must be in-process or pgvector; in-process keeps the embedded database's search graphs in memory, pgvector keeps them on disk inside the database" }),
  ),
  SCENARIOS_DIR: optionalString,
  SKILLS_DIR: optionalString,
  REVIEW_WEBHOOK_URL: optionalUrl,
  // The audit chain's key lives outside the database (docs/audit-trail.md); either the secret itself or a file holding it.
  AUDIT_KEY: optionalString.refine((value) => value === undefined || value.length >= 32, {
    message: 'must be at least 32 characters so it cannot be guessed; generate one with `openssl rand -hex 32`',
  }),
  AUDIT_KEY_FILE: optionalString,
  AUDIT_ANCHOR_CRON: optionalString.refine((value) => value === undefined || /^(\S+\s+){4}\S+$/.test(value), {
    message: 'must be a 5-field cron expression (UTC), e.g. "0 6 * * *" for every day at 06:00',
  }),
  // The administrator's choice alone: a project's REDCap token then travels unencrypted (a test REDCap on a lab network).
  REDCAP_ALLOW_HTTP: optionalString.transform((value) => value ?? 'false').pipe(
    z.enum(['true', 'false'], { message: 'must be true or false; true lets REDCap API URLs use plain http (the token then travels unencrypted)' }),
  ),
  // Likewise for Dify apps (scenario engine.base_url): a loopback Dify may always use http, any other only when this is true.
  DIFY_ALLOW_HTTP: optionalString.transform((value) => value ?? 'false').pipe(
    z.enum(['true', 'false'], { message: 'must be true or false; true lets Dify base URLs use plain http on any host (the app key then travels unencrypted)' }),
  ),
  // The hosts a Dify base URL may name although they are loopback, private or link-local: the administrator's say alone.
  DIFY_ALLOWED_HOSTS: hostList('127.0.0.1,dify.lab.example.org'),
  // MCP servers whose tools agents may use (docs/mcp.md, "MCP tools in agents"): the administrator's file of servers,
  // the URL policy of their URLs (as for Dify), and how long a call may take before it fails naming the server.
  MCP_SERVERS_FILE: optionalString,
  MCP_ALLOW_HTTP: optionalString.transform((value) => value ?? 'false').pipe(
    z.enum(['true', 'false'], { message: 'must be true or false; true lets MCP server URLs use plain http on any host (their tokens then travel unencrypted)' }),
  ),
  MCP_ALLOWED_HOSTS: hostList('127.0.0.1,mcp.lab.example.org'),
  MCP_TIMEOUT_MS: positiveInt(30_000, '30000').refine((n) => n >= 100 && n <= 600_000, { message: 'must be between 100 and 600000 (ms per MCP call), e.g. 30000' }),
  // Likewise for a project's REDCap API URL: a hospital's REDCap on its own network is named here.
  REDCAP_ALLOWED_HOSTS: hostList('redcap.hospital.internal,10.1.2.3'),
  UPLOAD_MAX_BYTES: positiveInt(50 * 1024 * 1024, '52428800').refine((n) => n >= 1024, { message: 'must be at least 1024 (bytes per uploaded file)' }),
  UPLOAD_MAX_TOTAL_BYTES: optionalString.refine((value) => value === undefined || /^\d+$/.test(value), { message: 'must be a whole number of bytes, e.g. 104857600' }),
  QC_CONCURRENCY: positiveInt(4, '4').refine((n) => n >= 1 && n <= 64, { message: 'must be between 1 and 64' }),
  // A run left RUNNING by a killed process moves again within 10 s of a live process seeing it (npm run test:chaos):
  // its lease lapses at most 6 s after the kill, a sweep (every 2 s) finds it, a poller (0.5 s) takes its job. A live
  // owner renews every 2 s (a third), so a lease only lapses when its owner's event loop stalls for 4 s.
  QC_LEASE_MS: positiveInt(RUN_RECOVERY_DEFAULTS.leaseMs, '6000').refine((n) => n >= 1000, { message: 'must be at least 1000 (1 s)' }),
  QC_SWEEP_INTERVAL_MS: positiveInt(RUN_RECOVERY_DEFAULTS.sweepIntervalMs, '2000').refine((n) => n >= 100, { message: 'must be at least 100' }),
  QC_STALE_MS: positiveInt(RUN_RECOVERY_DEFAULTS.staleMs, '3000'),
  // The trial assistant (seed 000 section 5): model calls, and tokens of reasoning (what a run adds to its first prompt), per question.
  ASSISTANT_MAX_ITERATIONS: positiveInt(5, '5').refine((n) => n >= 1 && n <= 20, { message: 'must be between 1 and 20' }),
  ASSISTANT_TOKEN_BUDGET: positiveInt(4000, '4000').refine((n) => n >= 500, { message: 'must be at least 500 tokens' }),
  // Project memory (seed 002): the hot-memory cap, how many weeks a history question reads, and the job schedules (UTC).
  MEMORY_HOT_MAX_TOKENS: positiveInt(2000, '2000').refine((n) => n >= 100 && n <= 32_000, { message: 'must be between 100 and 32000 tokens' }),
  MEMORY_HISTORY_WEEKS: positiveInt(50, '50').refine((n) => n >= 1 && n <= 520, { message: 'must be between 1 and 520 weeks' }),
  MEMORY_DISTILL_CRON: cron('0 2 * * *'),
  MEMORY_WEEKLY_CRON: cron('0 3 * * 1'),
  // A leaked user token stops working on its own after this many days; 10 years is the upper bound.
  TOKEN_TTL_DAYS: positiveInt(30, '30').refine((n) => n >= 1 && n <= 3650, { message: 'must be between 1 and 3650 days, e.g. 30' }),
  // Sign-in code attempts (POST /api/auth/login) per client address in a window; more answer 429 until it ends.
  SIGN_IN_MAX_ATTEMPTS: positiveInt(20, '20').refine((n) => n >= 1 && n <= 10_000, { message: 'must be between 1 and 10000 attempts, e.g. 20' }),
  SIGN_IN_WINDOW_SECONDS: positiveInt(900, '900').refine((n) => n >= 1 && n <= 86_400, { message: 'must be between 1 and 86400 seconds, e.g. 900' }),
  // Behind a reverse proxy every client has the proxy's address, and would share one sign-in budget: naming the proxy
  // lets the client address come from X-Forwarded-For. Unset, that header is ignored (a client could forge it).
  TRUST_PROXY: optionalString
    .refine((value) => value === undefined || value === 'false' || value === 'true' || /^[0-9a-fA-F.:/]+(\s*,\s*[0-9a-fA-F.:/]+)*$/.test(value), {
      message: 'must be false, true (trust every proxy; only when nothing else can reach the server), or the addresses of the proxies or CIDR ranges separated by commas (e.g. "10.0.0.2,10.0.1.0/24")',
    })
    .transform((value): boolean | string[] => (value === undefined || value === 'false' ? false : value === 'true' ? true : value.split(',').map((entry) => entry.trim()))),
  CLINAGENT_ADMIN_TOKEN: optionalString.refine((value) => value === undefined || value.length >= 24, {
    message: 'must be at least 24 characters so it cannot be guessed; generate one with `openssl rand -hex 24`',
  }),
  // Empty means unset here too, as for every other variable (`LOG_LEVEL=` in a .env file).
  LOG_LEVEL: optionalString.transform((value) => value ?? 'info').pipe(
    z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], { message: 'must be one of fatal, error, warn, info, debug, trace, silent, e.g. info' }),
  ),
  // OpenTelemetry export of runs, model calls and tool calls (docs/telemetry.md): the standard OTel variables, read by core/telemetry/otel-config.ts.
  OTEL_SDK_DISABLED: optionalString,
  OTEL_EXPORTER_OTLP_ENDPOINT: optionalString,
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: optionalString,
  OTEL_EXPORTER_OTLP_HEADERS: optionalString,
  OTEL_EXPORTER_OTLP_TRACES_HEADERS: optionalString,
  OTEL_EXPORTER_OTLP_TIMEOUT: optionalString,
  OTEL_EXPORTER_OTLP_TRACES_TIMEOUT: optionalString,
  OTEL_SERVICE_NAME: optionalString,
  OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: optionalString,
});

export interface LlmConfig {
  apiKey?: string;
  baseUrl?: string;
  model?: string;
  timeoutMs: number;
  maxRetries: number;
}

export interface EmbeddingConfig {
  /** Absent model means the offline local embedder. */
  apiKey?: string;
  baseUrl?: string;
  model?: string;
}

export interface VisionConfig {
  /** Absent means no vision model: image analysis answers CONFIG_MISSING naming VISION_MODEL. */
  model?: string;
  baseUrl?: string;
  apiKey?: string;
  /** Largest consult image accepted, in bytes (CONSULT_IMAGE_MAX_BYTES). */
  maxImageBytes: number;
}

export interface ConsultConfig {
  /** Tokens one consult's model calls may use in all (CONSULT_TOKEN_BUDGET). */
  tokenBudget: number;
}

export interface Config {
  llm: LlmConfig;
  embedding: EmbeddingConfig;
  vision: VisionConfig;
  consult: ConsultConfig;
  databaseUrl?: string;
  /** Used only to apply migrations, as the owner role; the application itself connects with databaseUrl (docs/database-roles.md). */
  databaseMigrationUrl?: string;
  host: string;
  port: number;
  dataDir: string;
  /** Where the embedded database keeps large scopes' search indexes (RAG_SCOPE_INDEX); a server database uses pgvector. */
  ragScopeIndex: 'in-process' | 'pgvector';
  scenariosDir: string;
  skillsDir: string;
  qc: {
    concurrency: number;
    reviewWebhookUrl?: string;
    /** How long a worker owns a task run between two saved steps before another may take it over. */
    leaseMs: number;
    sweepIntervalMs: number;
    /** A pending or ownerless running run untouched this long is re-enqueued by the sweep. */
    staleMs: number;
  };
  /** The trial assistant's limits per question (seed 000 section 5). */
  assistant: { maxIterations: number; tokenBudget: number };
  /** Project memory (seed 002): hot-memory cap in tokens, weeks of reports a history question reads, job schedules (cron, UTC). */
  memory: { hotMaxTokens: number; historyWeeks: number; distillCron: string; weeklyCron: string };
  /**
   * REDCap API access. A project's token is read only from the variable an admin bound to it (a name starting
   * REDCAP_TOKEN_), and sent only over https unless allowHttp. allowedHosts (REDCAP_ALLOWED_HOSTS): hosts a REDCap
   * API URL may name although they are not public addresses.
   */
  redcap: { allowHttp: boolean; allowedHosts: string[] };
  /**
   * Dify apps named by scenarios (engine.type dify): their base URLs must be https unless an allowed loopback host or
   * allowHttp. allowedHosts (DIFY_ALLOWED_HOSTS): hosts a Dify base URL may name although they are not public addresses.
   */
  dify: { allowHttp: boolean; allowedHosts: string[] };
  /**
   * MCP servers agents may use tools of (src/mcp/client): serversFile (MCP_SERVERS_FILE) lists them; their URLs follow
   * the Dify URL policy with MCP_ALLOW_HTTP and MCP_ALLOWED_HOSTS; timeoutMs bounds every connect, listing and call.
   */
  mcp: { serversFile?: string; allowHttp: boolean; allowedHosts: string[]; timeoutMs: number };
  /**
   * The audit chain's key (docs/audit-trail.md): AUDIT_KEY itself, or the file keyFile holds it in. createKeyFile is
   * true for the default file (beside the data folder; on PostgreSQL without DATA_DIR, one per database in the user's
   * configuration folder, legacyKeyFile being where older versions put it), which the first start creates; a file the administrator
   * named must exist. anchorCron, when set, posts the chains' heads to the review webhook on that schedule.
   */
  audit: { key?: string; keyFile: string; legacyKeyFile?: string; createKeyFile: boolean; anchorCron?: string };
  /** Multipart uploads: bytes per file, and bytes of all files of one request together. */
  uploads: { maxFileBytes: number; maxTotalBytes: number };
  adminToken?: string;
  /** Days a user token (sign-in link, issued by an admin) works; CLINAGENT_ADMIN_TOKEN never expires. */
  tokenTtlDays: number;
  /** Sign-in code attempts allowed per client address in each window (SIGN_IN_MAX_ATTEMPTS, SIGN_IN_WINDOW_SECONDS). */
  signIn: { maxAttempts: number; windowMs: number };
  /** TRUST_PROXY: the reverse proxies whose X-Forwarded-For gives the client's address (Fastify's trustProxy). */
  trustProxy: boolean | string[];
  logLevel: string;
  /** OTLP export of traces (docs/telemetry.md); undefined when OTEL_EXPORTER_OTLP_ENDPOINT is unset: nothing is loaded nor sent. */
  telemetry?: TelemetryConfig;
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env, cwd = process.cwd()): Config {
  const parsed = envSchema.safeParse(env);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => `${String(issue.path[0])} ${issue.message}`);
    throw new ClinAgentError('CONFIG_INVALID', `Invalid configuration:\n- ${problems.join('\n- ')}\nFix these environment variables (see .env.example) and start again.`, {
      problems,
    });
  }
  const e = parsed.data;
  const embeddingBaseUrl = e.EMBEDDING_BASE_URL ?? e.LLM_BASE_URL;
  if (e.EMBEDDING_MODEL && !embeddingBaseUrl) {
    throw new ClinAgentError(
      'CONFIG_MISSING',
      'EMBEDDING_MODEL is set but there is no endpoint for it. Set EMBEDDING_BASE_URL (or LLM_BASE_URL), e.g. http://127.0.0.1:8000/v1, or unset EMBEDDING_MODEL to use the offline local embedder.',
      { field: 'EMBEDDING_BASE_URL' },
    );
  }
  const visionBaseUrl = e.VISION_BASE_URL ?? e.LLM_BASE_URL;
  if (e.VISION_MODEL && !visionBaseUrl) {
    throw new ClinAgentError(
      'CONFIG_MISSING',
      'VISION_MODEL is set but there is no endpoint for it. Set VISION_BASE_URL (or LLM_BASE_URL), e.g. https://dashscope.aliyuncs.com/compatible-mode/v1, or unset VISION_MODEL to run consults without image analysis.',
      { field: 'VISION_BASE_URL' },
    );
  }
  if (e.DATABASE_MIGRATION_URL && !e.DATABASE_URL) {
    throw new ClinAgentError(
      'CONFIG_INVALID',
      'DATABASE_MIGRATION_URL is set but DATABASE_URL is not. Set DATABASE_URL to the application role\'s URL, e.g. postgres://clinagent_app:pass@127.0.0.1:5432/clinagent, or unset DATABASE_MIGRATION_URL to use the embedded database.',
      { field: 'DATABASE_URL' },
    );
  }
  if (e.AUDIT_KEY && e.AUDIT_KEY_FILE) {
    throw new ClinAgentError(
      'CONFIG_INVALID',
      'AUDIT_KEY and AUDIT_KEY_FILE are both set. Set one of them: the audit key itself, or the path of a file holding it (e.g. /etc/clinagent/audit-key).',
      { field: 'AUDIT_KEY_FILE' },
    );
  }
  if (e.AUDIT_ANCHOR_CRON && !e.REVIEW_WEBHOOK_URL) {
    throw new ClinAgentError(
      'CONFIG_MISSING',
      'AUDIT_ANCHOR_CRON is set but REVIEW_WEBHOOK_URL is not, so the audit anchors have nowhere to go. Set REVIEW_WEBHOOK_URL, e.g. https://hooks.example.org/clinagent, or unset AUDIT_ANCHOR_CRON.',
      { field: 'REVIEW_WEBHOOK_URL' },
    );
  }
  const dataDir = path.resolve(cwd, e.DATA_DIR ?? '.clinagent');
  // On PostgreSQL without DATA_DIR, not in the working folder: core/audit/audit-key-location.ts.
  const defaultKey = defaultAuditKeyFile({ databaseUrl: e.DATABASE_URL, dataDirSet: e.DATA_DIR !== undefined, dataDir, env });
  const auditKeyFile = e.AUDIT_KEY_FILE ? { keyFile: path.resolve(cwd, e.AUDIT_KEY_FILE) } : { keyFile: defaultKey.file, legacyKeyFile: defaultKey.legacyFile };
  return {
    llm: {
      apiKey: e.LLM_API_KEY,
      baseUrl: e.LLM_BASE_URL,
      model: e.LLM_MODEL,
      timeoutMs: e.LLM_TIMEOUT_MS,
      maxRetries: e.LLM_MAX_RETRIES,
    },
    embedding: {
      apiKey: e.EMBEDDING_API_KEY ?? e.LLM_API_KEY,
      baseUrl: e.EMBEDDING_MODEL ? embeddingBaseUrl : undefined,
      model: e.EMBEDDING_MODEL,
    },
    vision: {
      model: e.VISION_MODEL,
      baseUrl: e.VISION_MODEL ? visionBaseUrl : undefined,
      apiKey: e.VISION_MODEL ? (e.VISION_API_KEY ?? e.LLM_API_KEY) : undefined,
      maxImageBytes: e.CONSULT_IMAGE_MAX_BYTES,
    },
    consult: { tokenBudget: e.CONSULT_TOKEN_BUDGET },
    databaseUrl: e.DATABASE_URL,
    databaseMigrationUrl: e.DATABASE_MIGRATION_URL,
    host: e.HOST,
    port: e.PORT,
    dataDir,
    ragScopeIndex: e.RAG_SCOPE_INDEX,
    scenariosDir: path.resolve(cwd, e.SCENARIOS_DIR ?? 'scenarios'),
    skillsDir: path.resolve(cwd, e.SKILLS_DIR ?? 'skills'),
    qc: { concurrency: e.QC_CONCURRENCY, reviewWebhookUrl: e.REVIEW_WEBHOOK_URL, leaseMs: e.QC_LEASE_MS, sweepIntervalMs: e.QC_SWEEP_INTERVAL_MS, staleMs: e.QC_STALE_MS },
    assistant: { maxIterations: e.ASSISTANT_MAX_ITERATIONS, tokenBudget: e.ASSISTANT_TOKEN_BUDGET },
    memory: { hotMaxTokens: e.MEMORY_HOT_MAX_TOKENS, historyWeeks: e.MEMORY_HISTORY_WEEKS, distillCron: e.MEMORY_DISTILL_CRON, weeklyCron: e.MEMORY_WEEKLY_CRON },
    // REDCap credentials are per project (PUT /api/iit/projects/:id/redcap, admin), never one server-wide token.
    redcap: { allowHttp: e.REDCAP_ALLOW_HTTP === 'true', allowedHosts: e.REDCAP_ALLOWED_HOSTS },
    dify: { allowHttp: e.DIFY_ALLOW_HTTP === 'true', allowedHosts: e.DIFY_ALLOWED_HOSTS },
    mcp: { serversFile: e.MCP_SERVERS_FILE === undefined ? undefined : path.resolve(cwd, e.MCP_SERVERS_FILE), allowHttp: e.MCP_ALLOW_HTTP === 'true', allowedHosts: e.MCP_ALLOWED_HOSTS, timeoutMs: e.MCP_TIMEOUT_MS },
    // Beside the data folder, not in it: a copy of the folder (a backup, a support bundle) must not carry the key.
    // On PostgreSQL without DATA_DIR, in the user's configuration folder, never the working folder.
    audit: { key: e.AUDIT_KEY, ...auditKeyFile, createKeyFile: e.AUDIT_KEY_FILE === undefined, anchorCron: e.AUDIT_ANCHOR_CRON },
    uploads: { maxFileBytes: e.UPLOAD_MAX_BYTES, maxTotalBytes: e.UPLOAD_MAX_TOTAL_BYTES === undefined ? 2 * e.UPLOAD_MAX_BYTES : Number(e.UPLOAD_MAX_TOTAL_BYTES) },
    adminToken: e.CLINAGENT_ADMIN_TOKEN,
    tokenTtlDays: e.TOKEN_TTL_DAYS,
    signIn: { maxAttempts: e.SIGN_IN_MAX_ATTEMPTS, windowMs: e.SIGN_IN_WINDOW_SECONDS * 1000 },
    trustProxy: e.TRUST_PROXY,
    logLevel: e.LOG_LEVEL,
    telemetry: telemetryConfig(e),
  };
}

function isHttpUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return url.protocol === 'http:' || url.protocol === 'https:';
  } catch {
    return false;
  }
}
