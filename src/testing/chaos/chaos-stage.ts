import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startScriptedModel, type ScriptedModel } from '../scripted-model.js';
import { TEST_AUDIT_ENV } from '../test-database.js';
import { CHAOS_INTAKE_PROMPT, chaosModelAnswer } from './chaos-model.js';
import { CHAOS_SKILL } from './qc-batch-data.js';

export const CHAOS_ADMIN_TOKEN = 'chaos-test-admin-token-0123456789abcdef';

const INTAKE_SCENARIO = `
id: chaos-intake
name: Chaos intake agent
system_prompt: ${CHAOS_INTAKE_PROMPT}
output_type: text
decision: { mode: json, actions: [ask, respond], wait_on: { ask: answer } }
`;

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/**
 * What every process of a chaos run shares: a work folder with the QC skill and the intake agent, the scripted model,
 * the server's fixed loopback port (a restarted server answers where the last one did), and the environment. The
 * lease, heartbeat and sweep settings are left at their defaults: the promise is for the settings as shipped.
 */
export async function chaosStage(name: string, database: { DATABASE_URL: string } | { DATA_DIR: string } | ((workDir: string) => Record<string, string>)) {
  const workDir = mkdtempSync(path.join(tmpdir(), `clinagent-chaos-${name}-`));
  const skillsDir = path.join(workDir, 'skills');
  const scenariosDir = path.join(workDir, 'scenarios');
  mkdirSync(skillsDir);
  mkdirSync(scenariosDir);
  writeFileSync(path.join(skillsDir, 'chaos-check.yaml'), CHAOS_SKILL);
  writeFileSync(path.join(scenariosDir, 'chaos-intake.yaml'), INTAKE_SCENARIO);
  const model: ScriptedModel = await startScriptedModel([], { respond: chaosModelAnswer });
  const port = await freePort();
  const env: Record<string, string> = {
    ...(typeof database === 'function' ? database(workDir) : database),
    HOST: '127.0.0.1', PORT: String(port), SKILLS_DIR: skillsDir, SCENARIOS_DIR: scenariosDir,
    LLM_BASE_URL: model.baseURL, LLM_MODEL: 'chaos-model', LLM_API_KEY: 'sk-test-000000000000', LLM_TIMEOUT_MS: '30000', LLM_MAX_RETRIES: '0',
    CLINAGENT_ADMIN_TOKEN: CHAOS_ADMIN_TOKEN, LOG_LEVEL: 'info', QC_CONCURRENCY: '4', ...TEST_AUDIT_ENV,
  };
  return {
    workDir,
    model,
    url: `http://127.0.0.1:${port}`,
    env,
    async close(): Promise<void> {
      await model.close();
      rmSync(workDir, { recursive: true, force: true });
    },
  };
}
