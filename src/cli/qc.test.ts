import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { taskRuns } from '../core/db/schema/trial.js';
import { startServer, type RunningServer } from '../main.js';
import { killRunningClis, runCli } from '../testing/run-cli.js';
import { createTrialStore } from '../trial/store/trial-store.js';

/**
 * `clinagent qc` as users run it: a child process talking HTTP to a real server (Fastify, workers, embedded
 * database) started in this process. Without a TTY the command prints plain progress lines, which is what
 * these tests read.
 */

const ADMIN_TOKEN = 'qc-cli-admin-token-0123456789abcdef';
const RUN_ID = /[0-9a-f-]{36}/;

const ELIGIBILITY = `
id: eligibility
name: Eligibility check
start_node: hard
nodes:
  hard:
    type: hard_rule
    rules:
      - { id: age-range, field: age, logic: { and: [{ ">=": [{ var: age }, 18] }, { "<=": [{ var: age }, 75] }] }, message: "Age must be 18-75" }
    on_pass: end_ok
    on_fail: review
  review:
    type: human_review
    description: A data manager confirms the violation.
    on_approve: end_confirmed
    on_reject: end_rejected
`;

// No LLM is configured on the test server, so every run of this skill ends in end_error.
const NEEDS_LLM = `
id: needs-llm
name: Needs a model
start_node: soft
nodes:
  soft:
    type: soft_instruction
    instruction: Judge whether the record is plausible.
    field: age
    on_pass: end_ok
    on_fail: end_ok
`;

const runQc = (args: string[], env: Record<string, string> = {}) => runCli(['qc', ...args], env);

afterAll(killRunningClis);

describe('clinagent qc without a token', () => {
  it('exits 1 naming CLINAGENT_TOKEN before calling any server', async () => {
    const { code, stdout, stderr } = await runQc(['p1', 'eligibility'], { CLINAGENT_URL: 'http://127.0.0.1:9' });

    expect({ code, stdout }).toEqual({ code: 1, stdout: '' });
    expect(stderr).toMatch(/^clinagent qc: CONFIG_MISSING: .*CLINAGENT_TOKEN/);
  });
});

describe('clinagent qc against a running server', () => {
  let workDir: string;
  let server: RunningServer;
  let env: Record<string, string>;

  beforeAll(async () => {
    workDir = await mkdtemp(path.join(tmpdir(), 'clinagent-qc-cli-'));
    const skillsDir = path.join(workDir, 'skills');
    const scenariosDir = path.join(workDir, 'scenarios');
    await Promise.all([skillsDir, scenariosDir].map((dir) => mkdir(dir)));
    await writeFile(path.join(skillsDir, 'eligibility.yaml'), ELIGIBILITY);
    await writeFile(path.join(skillsDir, 'needs-llm.yaml'), NEEDS_LLM);
    server = await startServer({
      env: { DATA_DIR: path.join(workDir, 'data'), SKILLS_DIR: skillsDir, SCENARIOS_DIR: scenariosDir, HOST: '127.0.0.1', PORT: '0', CLINAGENT_ADMIN_TOKEN: ADMIN_TOKEN },
      logLevel: 'silent',
      print: () => {},
    });
    const store = createTrialStore(server.ctx.db);
    await store.ensureProject({ id: 'p1', name: 'Trial one' });
    const row = (recordId: string, age: number) => ({ recordId, eventName: 'baseline', site: 'SITE-01', data: { age } });
    await store.importRecords('p1', [row('S1', 40), row('S2', 90), row('S3', 50), row('S4', 16), row('S5', 33), row('S6', 61)], { actor: 'test' });
    env = { CLINAGENT_URL: server.url, CLINAGENT_TOKEN: ADMIN_TOKEN };
  });

  afterAll(async () => {
    await server?.close();
    if (workDir) await rm(workDir, { recursive: true, force: true });
  });

  it('checks every record, prints progress lines and a summary, and exits 0', async () => {
    const { code, stdout, stderr } = await runQc(['p1', 'eligibility'], env);

    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
    const lines = stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^QC run [0-9a-f-]{36}: skill eligibility over 6 record\(s\) of project p1\./);
    expect(lines).toContain('6/6 checked, 0 failed, 2 for review');
    expect(stdout).toMatch(/QC run \S+ waiting for review in \d+\.\d s: 6 record\(s\), 4 completed, 2 waiting for review, 0 failed\.\n/);
    expect(stdout).toContain(`Review them in the console: ${server.url}/#/trial/p1/review\n`);
    // Progress lines are printed on change only, so a batch never floods a CI log.
    const progress = lines.filter((line) => /^\d+\/6 checked/.test(line));
    expect(new Set(progress).size).toBe(progress.length);

    const qcRunId = RUN_ID.exec(lines[0]!)![0];
    const runs = await server.ctx.db.select().from(taskRuns).where(eq(taskRuns.qcRunId, qcRunId));
    expect(runs.map((r) => `${r.recordId}:${r.status}`).sort()).toEqual(['S1:COMPLETED', 'S2:SUSPENDED', 'S3:COMPLETED', 'S4:SUSPENDED', 'S5:COMPLETED', 'S6:COMPLETED']);
  });

  it('checks only the records given with --records', async () => {
    const { code, stdout } = await runQc(['p1', 'eligibility', '--records', 'S1,S2'], env);

    expect(code).toBe(0);
    expect(stdout).toMatch(/over 2 record\(s\)/);
    expect(stdout).toMatch(/: 2 record\(s\), 1 completed, 1 waiting for review, 0 failed\.\n/);
  });

  it('finds the server by the HOST and PORT it reads when no address is given, and --url before CLINAGENT_URL', async () => {
    const { hostname, port } = new URL(server.url);
    const [byConfig, byOption] = await Promise.all([
      runQc(['p1', 'eligibility', '--records', 'S1'], { CLINAGENT_TOKEN: ADMIN_TOKEN, HOST: hostname, PORT: port }),
      runQc(['p1', 'eligibility', '--records', 'S1', '--url', server.url], { CLINAGENT_TOKEN: ADMIN_TOKEN, CLINAGENT_URL: 'http://127.0.0.1:9' }),
    ]);

    expect([byConfig.code, byConfig.stderr]).toEqual([0, '']);
    expect(byConfig.stdout).toMatch(/over 1 record\(s\) of project p1/);
    expect([byOption.code, byOption.stderr]).toEqual([0, '']);
  });

  it('names the address it tried when no server answers there', async () => {
    const { code, stderr } = await runQc(['p1', 'eligibility'], { CLINAGENT_TOKEN: ADMIN_TOKEN, PORT: '9' });

    expect(code).toBe(1);
    expect(stderr).toMatch(/^clinagent qc: cannot reach the ClinAgent server at http:\/\/127\.0\.0\.1:9 .*--url or CLINAGENT_URL/);
  });

  it('exits 1 when runs of the batch failed', async () => {
    const { code, stdout } = await runQc(['p1', 'needs-llm', '--records=S1,S3'], env);

    expect(code).toBe(1);
    expect(stdout).toMatch(/: 2 record\(s\), 0 completed, 0 waiting for review, 2 failed\.\n/);
  });

  it('prints the server\'s message and exits 1 when the server refuses the run', async () => {
    const { code, stdout, stderr } = await runQc(['p1', 'eligibility', '--records', 'S1,S404'], env);

    expect({ code, stdout }).toEqual({ code: 1, stdout: '' });
    expect(stderr).toMatch(/^clinagent qc: POST \/api\/iit\/projects\/p1\/qc-runs failed with HTTP 404 NOT_FOUND: Unknown record id\(s\) in project "p1": S404\./);
  });

  it('prints the server\'s message and exits 1 for an unknown token', async () => {
    const { code, stderr } = await runQc(['p1', 'eligibility'], { ...env, CLINAGENT_TOKEN: 'not-a-token' });

    expect(code).toBe(1);
    expect(stderr).toMatch(/HTTP 401 UNAUTHENTICATED: The bearer token is unknown\. /);
  });
});
