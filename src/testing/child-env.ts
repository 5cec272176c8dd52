/**
 * Every variable loadConfig or the CLI reads. Child processes in tests start from the test's environment
 * without them, so a developer's own settings (an LLM, a server, a token) never leak into a test.
 */
const CONFIG_VARIABLES = /^(LLM_|EMBEDDING_|QC_|CLINAGENT_|REDCAP_|AUDIT_|DATABASE_URL$|DATABASE_MIGRATION_URL$|DATA_DIR$|SCENARIOS_DIR$|SKILLS_DIR$|HOST$|PORT$|REVIEW_WEBHOOK_URL$|LOG_LEVEL$|TOKEN_TTL_DAYS$)/;

export function childEnv(env: Record<string, string> = {}): Record<string, string> {
  const base = Object.fromEntries(Object.entries(process.env).filter((entry): entry is [string, string] => entry[1] !== undefined && !CONFIG_VARIABLES.test(entry[0])));
  return { ...base, ...env };
}
