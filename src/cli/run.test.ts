import { mkdtemp, writeFile, mkdir } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { killRunningClis, runCli } from '../testing/run-cli.js';
import { startScriptedDify, type ScriptedDify } from '../testing/scripted-dify.js';

afterAll(killRunningClis);

/** A loopback port nothing listens on: taken, then let go, so a connection to it is refused. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as import('node:net').AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** `clinagent run` on a Dify scenario as an operator runs it: start-form inputs from flags, and a clear error when Dify is down. */
describe('clinagent run on a Dify scenario', () => {
  let dify: ScriptedDify;
  let env: Record<string, string>;

  beforeAll(async () => {
    dify = await startScriptedDify();
    const workDir = await mkdtemp(path.join(tmpdir(), 'clinagent-run-'));
    const scenarios = path.join(workDir, 'scenarios');
    await mkdir(scenarios);
    const engine = (baseUrl: string, lines: string) => `engine:\n  type: dify\n  base_url: ${baseUrl}\n  api_key_env: DIFY_CLI_KEY\n${lines}`;
    await writeFile(path.join(scenarios, 'up.yaml'), `id: dify-up\nname: Up\n${engine(dify.baseURL, '  app_mode: workflow\n  input_variable: question\n  output_key: answer\n')}`);
    await writeFile(path.join(scenarios, 'down.yaml'), `id: dify-down\nname: Down\n${engine(`http://127.0.0.1:${await closedPort()}/v1`, '  app_mode: chat\n')}`);
    env = { DATA_DIR: path.join(workDir, 'data'), SCENARIOS_DIR: scenarios, DIFY_ALLOWED_HOSTS: '127.0.0.1', DIFY_CLI_KEY: 'app-cli-key-0123456789', LOG_LEVEL: 'info' };
  });

  afterAll(async () => {
    await dify?.close();
  });

  it('sends --input and --inputs as the start form, and prints the AgentResult', async () => {
    dify.push({
      events: [{ event: 'workflow_finished', data: { status: 'succeeded', outputs: { answer: 'Site S01 is on track.' }, total_tokens: 3 } }],
      requiredInputs: ['site', 'visit'],
    });
    const { code, stdout, stderr } = await runCli(['run', 'dify-up', 'How is the site doing?', '--input', 'site=S01', '--inputs', '{"visit": 2, "fasting": true}'], env);
    expect(stderr).not.toContain('clinagent run:');
    expect(code).toBe(0);
    expect(JSON.parse(stdout)).toMatchObject({ status: 'success', answer: 'Site S01 is on track.', files: [] });
    expect(dify.requests.at(-1)!.body.inputs).toEqual({ visit: 2, fasting: true, site: 'S01', question: 'How is the site doing?' });
  });

  it('refuses inputs that are not start-form values, naming each', async () => {
    const { code, stderr } = await runCli(['run', 'dify-up', 'Hi', '--input', '2bad=x', '--inputs', '{"nested": {"a": 1}}'], env);
    expect(code).toBe(1);
    expect(stderr).toContain('inputs.2bad: must be a Dify variable name');
    expect(stderr).toContain('inputs.nested: must be text');
  });

  it('says in one line that Dify cannot be reached: no JSON log line, no stack trace', async () => {
    const { code, stdout, stderr } = await runCli(['run', 'dify-down', 'Hello?'], env);
    expect(code).toBe(1);
    // Start-up may log (at LOG_LEVEL=info, e.g. the audit key's first-start warning); the run itself logs nothing.
    const runLines = stderr.trim().split('\n').filter((line) => !line.startsWith('{') || /dify|"err"/i.test(line));
    expect(runLines).toHaveLength(1);
    expect(runLines[0]).toMatch(/^clinagent run: the run failed: The Dify app of scenario dify-down could not be reached at http:\/\/127\.0\.0\.1:\d+\/v1: fetch failed: .*ECONNREFUSED.*Check engine\.base_url and that the Dify server is up\. \(trace [0-9a-f-]+\)$/);
    expect(stderr).not.toMatch(/\n\s+at /);
    expect(stderr).not.toContain('"stack"');
    expect(JSON.parse(stdout)).toMatchObject({ status: 'failed' });
  });
});
