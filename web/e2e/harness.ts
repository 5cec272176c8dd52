import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startServer, type RunningServer } from '../../src/main.js';
import { startScriptedModel, type ScriptedModel, type ScriptedModelOptions, type ScriptedStep } from '../../src/testing/scripted-model.js';

/** A real server on a fresh data folder, with only the model's words scripted. */
export interface Harness {
  server: RunningServer;
  model: ScriptedModel;
  dataDir: string;
}

interface HarnessOptions {
  /** Names the temp data folder, so a left-over folder says which test made it. */
  name: string;
  /** Absent: the server prints a one-time sign-in link instead. */
  adminToken?: string;
  steps?: ScriptedStep[];
  /** Answer to any call beyond `steps`, so tests pin the UI rather than model call counts. */
  fallback: ScriptedStep;
  /** Answer from the request instead (e.g. a classifier call and an answer call told apart by their prompt); undefined falls through to `steps`, then `fallback`. */
  respond?: ScriptedModelOptions['respond'];
  /** QC skills (file name without .yaml to its YAML), written to a skills folder inside the data folder. */
  skills?: Record<string, string>;
  /** Extra environment, written once the data folder exists. */
  env?: (dataDir: string) => Promise<Record<string, string>> | Record<string, string>;
}

async function writeSkills(dataDir: string, skills: Record<string, string>): Promise<Record<string, string>> {
  const skillsDir = path.join(dataDir, 'skills');
  await mkdir(skillsDir);
  for (const [file, yaml] of Object.entries(skills)) await writeFile(path.join(skillsDir, `${file}.yaml`), yaml);
  return { SKILLS_DIR: skillsDir };
}

export async function startHarness(options: HarnessOptions): Promise<Harness> {
  const dataDir = await mkdtemp(path.join(tmpdir(), `clinagent-e2e-${options.name}-`));
  const model = await startScriptedModel(options.steps ?? [], { fallback: options.fallback, respond: options.respond });
  const server = await startServer({
    env: {
      DATA_DIR: dataDir,
      PORT: '0',
      HOST: '127.0.0.1',
      LLM_BASE_URL: model.baseURL,
      LLM_MODEL: 'scripted-model',
      ...(options.adminToken ? { CLINAGENT_ADMIN_TOKEN: options.adminToken } : {}),
      ...(options.skills ? await writeSkills(dataDir, options.skills) : {}),
      ...(await options.env?.(dataDir)),
    },
    logLevel: 'warn',
    print: () => {},
  });
  return { server, model, dataDir };
}

export async function stopHarness(harness: Harness | undefined): Promise<void> {
  if (!harness) return;
  await harness.server.close();
  await harness.model.close();
  await rm(harness.dataDir, { recursive: true, force: true });
}
