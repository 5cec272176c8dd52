import { readFile, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type RunningServer } from '../main.js';
import { killRunningClis, runCli } from '../testing/run-cli.js';
import { createThrowawayDatabase, POSTGRES_TEMPLATE_ENV, TEST_AUDIT_ENV, testEngines } from '../testing/test-database.js';
import { createTrialStore } from '../trial/store/trial-store.js';

/**
 * `clinagent import` as users run it: a child process sending files to a real server started in this process.
 * The CSV files and the ODM file of test-data/trial/odm are exports of the same project.
 */

const ADMIN_TOKEN = 'import-cli-admin-token-0123456789abcdef';
const ODM_DIR = path.join(process.cwd(), 'test-data', 'trial', 'odm');
const fixture = (name: string) => path.join(ODM_DIR, name);
const csvArgs = (records = fixture('records.csv')) => ['--dictionary', fixture('dictionary.csv'), '--records', records, '--events', fixture('events.csv'), '--arms', fixture('arms.csv')];

const runImport = (args: string[], env: Record<string, string> = {}) => runCli(['import', ...args], env);

afterAll(killRunningClis);

describe('clinagent import before calling a server', () => {
  const env = { CLINAGENT_TOKEN: ADMIN_TOKEN, CLINAGENT_URL: 'http://127.0.0.1:9' };

  it('names every file it cannot read and sends nothing', async () => {
    const { code, stdout, stderr } = await runImport(['p1', '--dictionary', 'no-such-dictionary.csv', '--records', fixture('records.csv'), '--events', 'no-such-events.csv'], env);

    expect({ code, stdout }).toEqual({ code: 1, stdout: '' });
    expect(stderr).toMatch(/^clinagent import: NOT_FOUND: Cannot read these files; nothing was sent:/);
    expect(stderr).toContain(`--dictionary no-such-dictionary.csv: no such file (${path.resolve('no-such-dictionary.csv')})`);
    expect(stderr).toContain('--events no-such-events.csv: no such file');
    expect(stderr).not.toContain('records.csv');
    // Refused before any call: the unreachable server is never mentioned.
    expect(stderr).not.toContain('cannot reach');
  });

  it('asks for the files a CSV import needs, and refuses an ODM file together with CSV files', async () => {
    const [onlyDictionary, both, noToken] = await Promise.all([
      runImport(['p1', '--dictionary', fixture('dictionary.csv')], env),
      runImport(['p1', '--odm', fixture('project.odm.xml'), '--records', fixture('records.csv')], env),
      runImport(['p1', '--odm', fixture('project.odm.xml')], { CLINAGENT_URL: 'http://127.0.0.1:9' }),
    ]);

    expect(onlyDictionary.code).toBe(1);
    expect(onlyDictionary.stderr).toMatch(/^clinagent import: VALIDATION_FAILED: A REDCap CSV import needs --records\. Usage: clinagent import <projectId>/);
    expect(both.code).toBe(1);
    expect(both.stderr).toMatch(/Give either --odm or the REDCap CSV files, not both \(also given: --records\)/);
    expect(noToken.code).toBe(1);
    expect(noToken.stderr).toMatch(/^clinagent import: CONFIG_MISSING: .*CLINAGENT_TOKEN/);
  });
});

describe.each(testEngines())('clinagent import against a running server on %s', (engine) => {
  let workDir: string;
  let server: RunningServer;
  let dropDatabase: (() => Promise<void>) | undefined;
  let env: Record<string, string>;

  beforeAll(async () => {
    workDir = await mkdtemp(path.join(tmpdir(), 'clinagent-import-cli-'));
    const [skillsDir, scenariosDir] = [path.join(workDir, 'skills'), path.join(workDir, 'scenarios')];
    await Promise.all([skillsDir, scenariosDir].map((dir) => mkdir(dir)));
    let database: Record<string, string> = { DATA_DIR: path.join(workDir, 'data') };
    if (engine === 'postgres') {
      const throwaway = await createThrowawayDatabase(process.env.TEST_DATABASE_URL!, process.env[POSTGRES_TEMPLATE_ENV]);
      dropDatabase = throwaway.drop;
      database = { DATABASE_URL: throwaway.url, ...TEST_AUDIT_ENV };
    }
    server = await startServer({
      env: { ...database, SKILLS_DIR: skillsDir, SCENARIOS_DIR: scenariosDir, HOST: '127.0.0.1', PORT: '0', CLINAGENT_ADMIN_TOKEN: ADMIN_TOKEN },
      logLevel: 'silent',
      print: () => {},
    });
    const store = createTrialStore(server.ctx.db);
    await store.ensureProject({ id: 'csv-trial', name: 'CSV trial' });
    await store.ensureProject({ id: 'odm-trial', name: 'ODM trial' });
    env = { CLINAGENT_URL: server.url, CLINAGENT_TOKEN: ADMIN_TOKEN };
  });

  afterAll(async () => {
    await server?.close();
    await dropDatabase?.();
    if (workDir) await rm(workDir, { recursive: true, force: true });
  });

  const recordCount = async (projectId: string) => (await createTrialStore(server.ctx.db).listRecords(projectId)).length;

  it('lists every problem of a REDCap export by file, line and field, exits 1 and writes nothing', async () => {
    const records = (await readFile(fixture('records.csv'), 'utf8')).replace(',72.5,132,', ',72.5,13x,');
    const bad = path.join(workDir, 'records-bad.csv');
    await writeFile(bad, records);

    const { code, stdout, stderr } = await runImport(['csv-trial', ...csvArgs(bad)], env);

    expect({ code, stdout }).toEqual({ code: 1, stdout: '' });
    expect(stderr.startsWith(`Nothing was imported: 1 problem in ${bad}. Fix each line below and import the files again.\n`)).toBe(true);
    expect(stderr).toContain(`\n  ${bad} line 3, field sbp: "13x" is not an integer`);
    expect(await recordCount('csv-trial')).toBe(0);
  });

  it('imports a REDCap export with events and arms and prints what it changed', async () => {
    const { code, stdout, stderr } = await runImport(['csv-trial', ...csvArgs()], env);

    expect(server.ctx.database.engine).toBe(engine);
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
    expect(stdout).toMatch(/^Imported dictionary\.csv, records\.csv, events\.csv, arms\.csv into project csv-trial\.\n/);
    expect(stdout).toContain('  dictionary: 11 field(s), changed; events: 6, changed; arms: 2, changed\n');
    expect(stdout).toContain('  records: 13 created, 0 updated, 0 unchanged\n');
    expect(await recordCount('csv-trial')).toBeGreaterThan(0);

    const again = await runImport(['csv-trial', ...csvArgs()], env);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain('  records: 0 created, 0 updated, 13 unchanged\n');
  });

  it('imports a CDISC ODM file to the same records, and names a bad value by its ODM element', async () => {
    const odm = (await readFile(fixture('project.odm.xml'), 'utf8')).replace('<ItemData ItemOID="sbp" Value="132"/>', '<ItemData ItemOID="sbp" Value="13x"/>');
    const bad = path.join(workDir, 'bad.odm.xml');
    await writeFile(bad, odm);

    const refused = await runImport(['odm-trial', '--odm', bad], env);
    const imported = await runImport(['odm-trial', '--odm', fixture('project.odm.xml')], env);

    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('bad.odm.xml line ');
    expect(refused.stderr).toContain('(ItemData[@ItemOID="sbp"] in SubjectData[@SubjectKey="101"]/StudyEventData[@StudyEventOID="Event.baseline_arm_1"]), field sbp: "13x" is not an integer');
    expect({ code: imported.code, stderr: imported.stderr }).toEqual({ code: 0, stderr: '' });
    expect(imported.stdout).toMatch(/^Imported project\.odm\.xml into project odm-trial\.\n/);
    expect(imported.stdout).toContain('records: 13 created');
    expect(await recordCount('odm-trial')).toBe(await recordCount('csv-trial'));
  });

  it("prints the server's refusal for a project the token cannot write", async () => {
    const { code, stderr } = await runImport(['no-such-project', '--odm', fixture('project.odm.xml')], env);

    expect(code).toBe(1);
    expect(stderr).toMatch(/^clinagent import: POST \/api\/iit\/projects\/no-such-project\/imports failed with HTTP 4\d\d /);
  });
});
