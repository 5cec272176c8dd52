import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from './config.js';
import { ClinAgentError } from './errors.js';

const cwd = path.resolve('/srv/clinagent');

/** Runs `loadConfig` expecting a failure and returns the ClinAgentError it threw. */
function configError(env: NodeJS.ProcessEnv): ClinAgentError {
  try {
    loadConfig(env, cwd);
  } catch (error) {
    if (ClinAgentError.isInstance(error)) return error;
    throw error;
  }
  throw new Error('loadConfig accepted a bad configuration');
}

describe('loadConfig', () => {
  it('starts on 127.0.0.1:3000 with data in ./.clinagent when nothing is set', () => {
    const config = loadConfig({}, cwd);

    expect(config.host).toBe('127.0.0.1');
    expect(config.port).toBe(3000);
    expect(config.dataDir).toBe(path.join(cwd, '.clinagent'));
    expect(path.isAbsolute(config.dataDir)).toBe(true);
    expect(config.scenariosDir).toBe(path.join(cwd, 'scenarios'));
    expect(config.databaseUrl).toBeUndefined();
    expect(config.llm).toEqual({ apiKey: undefined, baseUrl: undefined, model: undefined, timeoutMs: 60_000, maxRetries: 2 });
    expect(config.logLevel).toBe('info');
  });

  it('treats empty variables as unset, LOG_LEVEL included', () => {
    const config = loadConfig({ HOST: '', PORT: '', LLM_BASE_URL: '  ', LOG_LEVEL: '' }, cwd);

    expect(config.host).toBe('127.0.0.1');
    expect(config.port).toBe(3000);
    expect(config.llm.baseUrl).toBeUndefined();
    expect(config.logLevel).toBe('info');
  });

  it('resolves a relative DATA_DIR against the working directory', () => {
    expect(loadConfig({ DATA_DIR: 'var/data' }, cwd).dataDir).toBe(path.join(cwd, 'var', 'data'));
  });

  it('lets the embedding endpoint reuse the LLM key and base URL when only EMBEDDING_MODEL is set', () => {
    const config = loadConfig({ LLM_API_KEY: 'sk-llm-key-0123456789', LLM_BASE_URL: 'http://127.0.0.1:8000/v1', LLM_MODEL: 'qwen-plus', EMBEDDING_MODEL: 'text-embedding-v3' }, cwd);

    expect(config.embedding).toEqual({ apiKey: 'sk-llm-key-0123456789', baseUrl: 'http://127.0.0.1:8000/v1', model: 'text-embedding-v3' });
  });

  it('prefers the EMBEDDING_* variables over the LLM ones when both are set', () => {
    const config = loadConfig(
      {
        LLM_API_KEY: 'sk-llm-key-0123456789',
        LLM_BASE_URL: 'http://127.0.0.1:8000/v1',
        EMBEDDING_API_KEY: 'sk-embed-key-0123456789',
        EMBEDDING_BASE_URL: 'https://embeddings.example.org/v1',
        EMBEDDING_MODEL: 'bge-m3',
      },
      cwd,
    );

    expect(config.embedding).toEqual({ apiKey: 'sk-embed-key-0123456789', baseUrl: 'https://embeddings.example.org/v1', model: 'bge-m3' });
  });

  it('uses the offline local embedder (no model, no endpoint) when EMBEDDING_MODEL is absent', () => {
    const config = loadConfig({ LLM_BASE_URL: 'http://127.0.0.1:8000/v1', LLM_MODEL: 'qwen-plus' }, cwd);

    expect(config.embedding.model).toBeUndefined();
    expect(config.embedding.baseUrl).toBeUndefined();
  });

  it('has no vision model by default and accepts consult images up to 5 MB', () => {
    const config = loadConfig({ LLM_API_KEY: 'sk-llm-key-0123456789', LLM_BASE_URL: 'http://127.0.0.1:8000/v1', LLM_MODEL: 'qwen-plus' }, cwd);

    expect(config.vision).toEqual({ model: undefined, baseUrl: undefined, apiKey: undefined, maxImageBytes: 5 * 1024 * 1024 });
  });

  it('serves VISION_MODEL from the LLM endpoint and key unless VISION_BASE_URL and VISION_API_KEY say otherwise', () => {
    const llm = { LLM_API_KEY: 'sk-llm-key-0123456789', LLM_BASE_URL: 'http://127.0.0.1:8000/v1', LLM_MODEL: 'qwen-plus' };
    expect(loadConfig({ ...llm, VISION_MODEL: 'qwen-vl-max' }, cwd).vision).toEqual({ model: 'qwen-vl-max', baseUrl: 'http://127.0.0.1:8000/v1', apiKey: 'sk-llm-key-0123456789', maxImageBytes: 5 * 1024 * 1024 });

    const own = loadConfig({ ...llm, VISION_MODEL: 'qwen-vl-max', VISION_BASE_URL: 'https://vision.example.org/v1', VISION_API_KEY: 'sk-vision-key-0123456789', CONSULT_IMAGE_MAX_BYTES: '2097152' }, cwd);
    expect(own.vision).toEqual({ model: 'qwen-vl-max', baseUrl: 'https://vision.example.org/v1', apiKey: 'sk-vision-key-0123456789', maxImageBytes: 2_097_152 });
  });

  it('asks for VISION_BASE_URL when VISION_MODEL is set but no endpoint is, and refuses a tiny or non-numeric image limit', () => {
    const error = configError({ VISION_MODEL: 'qwen-vl-max' });
    expect(error.code).toBe('CONFIG_MISSING');
    expect(error.message).toContain('VISION_BASE_URL');
    expect(error.details).toEqual({ field: 'VISION_BASE_URL' });

    const limits = configError({ CONSULT_IMAGE_MAX_BYTES: '100', VISION_BASE_URL: 'not-a-url' });
    expect(limits.details.problems).toEqual([expect.stringMatching(/^VISION_BASE_URL must be an http\(s\) URL/), expect.stringMatching(/^CONSULT_IMAGE_MAX_BYTES must be at least 1024/)]);
    expect(configError({ CONSULT_IMAGE_MAX_BYTES: '5MB' }).details.problems).toEqual([expect.stringMatching(/^CONSULT_IMAGE_MAX_BYTES must be a whole number/)]);
  });

  it('reports every bad variable at once, each by name', () => {
    const error = configError({ PORT: 'abc', LLM_BASE_URL: 'not-a-url', DATABASE_URL: 'mysql://root@127.0.0.1/clinagent' });

    expect(error.code).toBe('CONFIG_INVALID');
    const problems = error.details.problems as string[];
    expect(problems).toHaveLength(3);
    expect(problems.find((p) => p.startsWith('PORT '))).toMatch(/whole number/);
    expect(problems.find((p) => p.startsWith('LLM_BASE_URL '))).toMatch(/http\(s\) URL/);
    expect(problems.find((p) => p.startsWith('DATABASE_URL '))).toMatch(/PostgreSQL/);
    for (const name of ['PORT', 'LLM_BASE_URL', 'DATABASE_URL']) expect(error.message).toContain(name);
  });

  it('rejects a port above 65535 and a non-numeric timeout', () => {
    const error = configError({ PORT: '70000', LLM_TIMEOUT_MS: '1m' });

    expect(error.details.problems).toEqual([expect.stringMatching(/^LLM_TIMEOUT_MS /), expect.stringMatching(/^PORT .*65535/)]);
  });

  it('rejects an unknown LOG_LEVEL naming the accepted levels', () => {
    const error = configError({ LOG_LEVEL: 'loud' });

    expect(error.details.problems).toEqual([expect.stringMatching(/^LOG_LEVEL .*debug/)]);
  });

  it('rejects a CLINAGENT_ADMIN_TOKEN short enough to guess', () => {
    const error = configError({ CLINAGENT_ADMIN_TOKEN: 'hunter2' });

    expect(error.code).toBe('CONFIG_INVALID');
    expect(error.message).toContain('CLINAGENT_ADMIN_TOKEN');
    expect(error.message).toMatch(/at least 24 characters/);
    expect(loadConfig({ CLINAGENT_ADMIN_TOKEN: 'a'.repeat(24) }, cwd).adminToken).toBe('a'.repeat(24));
  });

  it('gives user tokens 30 days by default and refuses a TOKEN_TTL_DAYS of 0 or not a number', () => {
    expect(loadConfig({}, cwd).tokenTtlDays).toBe(30);
    expect(loadConfig({ TOKEN_TTL_DAYS: '7' }, cwd).tokenTtlDays).toBe(7);
    for (const bad of ['0', 'thirty', '5000']) {
      const error = configError({ TOKEN_TTL_DAYS: bad });
      expect(error.code).toBe('CONFIG_INVALID');
      expect(error.details.problems).toEqual([expect.stringMatching(/^TOKEN_TTL_DAYS .*e\.g\. 30/)]);
    }
  });

  it('gives the assistant 5 rounds and 4000 tokens, and memory a 2000-token cap and 50 weeks, unless set otherwise', () => {
    expect(loadConfig({}, cwd)).toMatchObject({
      assistant: { maxIterations: 5, tokenBudget: 4000 },
      memory: { hotMaxTokens: 2000, historyWeeks: 50, distillCron: '0 2 * * *', weeklyCron: '0 3 * * 1' },
    });
    expect(loadConfig({ ASSISTANT_TOKEN_BUDGET: '8000', MEMORY_HOT_MAX_TOKENS: '1500', MEMORY_WEEKLY_CRON: ' 0 6 * * 1 ' }, cwd)).toMatchObject({
      assistant: { tokenBudget: 8000 },
      memory: { hotMaxTokens: 1500, weeklyCron: '0 6 * * 1' },
    });
    const error = configError({ ASSISTANT_TOKEN_BUDGET: '100', MEMORY_HOT_MAX_TOKENS: 'lots', MEMORY_DISTILL_CRON: 'daily' });
    expect(error.details.problems).toEqual([
      expect.stringMatching(/^ASSISTANT_TOKEN_BUDGET must be at least 500/),
      expect.stringMatching(/^MEMORY_HOT_MAX_TOKENS must be a whole number, e\.g\. 2000/),
      expect.stringMatching(/^MEMORY_DISTILL_CRON must be a 5-field cron expression \(UTC\), e\.g\. "0 2 \* \* \*"/),
    ]);
  });

  it('limits uploads to 50 MB per file and twice that per request unless UPLOAD_MAX_BYTES / UPLOAD_MAX_TOTAL_BYTES say otherwise', () => {
    expect(loadConfig({}, cwd).uploads).toEqual({ maxFileBytes: 52_428_800, maxTotalBytes: 104_857_600 });
    expect(loadConfig({ UPLOAD_MAX_BYTES: '10485760', UPLOAD_MAX_TOTAL_BYTES: '31457280' }, cwd).uploads).toEqual({ maxFileBytes: 10_485_760, maxTotalBytes: 31_457_280 });
    const error = configError({ UPLOAD_MAX_BYTES: '50MB', UPLOAD_MAX_TOTAL_BYTES: 'lots' });
    expect(error.message).toContain('UPLOAD_MAX_BYTES must be a whole number, e.g. 52428800');
    expect(error.message).toContain('UPLOAD_MAX_TOTAL_BYTES must be a whole number of bytes');
  });

  it('has no server-wide REDCap token: REDCap credentials are set per project', () => {
    // REDCAP_ALLOW_HTTP is the only server-wide REDCap setting; no token is read from these variables.
    expect(JSON.stringify(loadConfig({ REDCAP_API_URL: 'https://redcap.example.org/api/', REDCAP_API_TOKEN: 'ABCDEF0123456789ABCDEF0123456789' }, cwd))).not.toMatch(/ABCDEF0123456789|redcap\.example\.org/);
  });

  it('asks for EMBEDDING_BASE_URL when EMBEDDING_MODEL is set but no base URL is', () => {
    const error = configError({ EMBEDDING_MODEL: 'bge-m3' });

    expect(error.code).toBe('CONFIG_MISSING');
    expect(error.message).toContain('EMBEDDING_BASE_URL');
    expect(error.details).toEqual({ field: 'EMBEDDING_BASE_URL' });
  });

  it('migrates with DATABASE_MIGRATION_URL and runs with DATABASE_URL, and refuses a migration URL without DATABASE_URL', () => {
    const config = loadConfig({ DATABASE_URL: 'postgres://clinagent_app@db/clinagent', DATABASE_MIGRATION_URL: 'postgres://clinagent_owner@db/clinagent' }, cwd);
    expect(config).toMatchObject({ databaseUrl: 'postgres://clinagent_app@db/clinagent', databaseMigrationUrl: 'postgres://clinagent_owner@db/clinagent' });
    expect(loadConfig({ DATABASE_URL: 'postgres://root@db/clinagent' }, cwd).databaseMigrationUrl).toBeUndefined();

    const alone = configError({ DATABASE_MIGRATION_URL: 'postgres://clinagent_owner@db/clinagent' });
    expect(alone.code).toBe('CONFIG_INVALID');
    expect(alone.message).toContain('DATABASE_MIGRATION_URL is set but DATABASE_URL is not');
    expect(configError({ DATABASE_URL: 'postgres://a@db/c', DATABASE_MIGRATION_URL: 'mysql://owner@db/c' }).message).toContain('DATABASE_MIGRATION_URL must be a PostgreSQL connection URL');
  });

  it('keys the audit trail with AUDIT_KEY or a key file, by default one beside (not inside) the data folder', () => {
    expect(loadConfig({}, cwd).audit).toEqual({ key: undefined, keyFile: path.join(cwd, '.clinagent.audit-key'), createKeyFile: true, anchorCron: undefined });
    expect(loadConfig({ DATA_DIR: '/var/lib/clinagent/data' }, cwd).audit.keyFile).toBe(path.resolve('/var/lib/clinagent/data.audit-key'));
    expect(loadConfig({ AUDIT_KEY_FILE: 'secrets/audit-key' }, cwd).audit).toMatchObject({ keyFile: path.join(cwd, 'secrets', 'audit-key'), createKeyFile: false });
    expect(loadConfig({ AUDIT_KEY: 'x'.repeat(32) }, cwd).audit.key).toBe('x'.repeat(32));
  });

  it('refuses an AUDIT_KEY short enough to guess, both AUDIT_KEY and AUDIT_KEY_FILE, and an anchor schedule with nowhere to post', () => {
    const short = configError({ AUDIT_KEY: 'short-key' });
    expect(short.code).toBe('CONFIG_INVALID');
    expect(short.message).toContain('AUDIT_KEY must be at least 32 characters so it cannot be guessed; generate one with `openssl rand -hex 32`');
    expect(short.message).not.toContain('short-key');

    const both = configError({ AUDIT_KEY: 'x'.repeat(32), AUDIT_KEY_FILE: '/etc/clinagent/audit-key' });
    expect(both).toMatchObject({ code: 'CONFIG_INVALID', details: { field: 'AUDIT_KEY_FILE' } });
    expect(both.message).toContain('AUDIT_KEY and AUDIT_KEY_FILE are both set. Set one of them');

    expect(configError({ AUDIT_ANCHOR_CRON: 'daily' }).message).toContain('AUDIT_ANCHOR_CRON must be a 5-field cron expression (UTC), e.g. "0 6 * * *"');
    expect(configError({ AUDIT_ANCHOR_CRON: '0 6 * * *' })).toMatchObject({ code: 'CONFIG_MISSING', details: { field: 'REVIEW_WEBHOOK_URL' } });
    expect(loadConfig({ AUDIT_ANCHOR_CRON: '0 6 * * *', REVIEW_WEBHOOK_URL: 'https://hooks.example.org/clinagent' }, cwd).audit.anchorCron).toBe('0 6 * * *');
  });
});
