import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import iconv from 'iconv-lite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { packageRoot } from '../../core/paths.js';
import { buildTestContext } from '../../testing/test-context.js';
import { testEngines } from '../../testing/test-database.js';
import { createTrialStore } from '../../trial/store/trial-store.js';
import { buildServer } from '../server.js';
import { multipartBody, type MultipartFile } from '../../testing/multipart.js';

type App = Awaited<ReturnType<typeof buildServer>>;

const testFile = (name: string) => readFileSync(path.join(packageRoot(), 'test-data', 'trial', name));
// Unique per run, so a variable left over from another test file can never answer for these projects.
const suffix = `${process.pid}_${Date.now()}`;
const TOKEN_ENV_A = `REDCAP_TOKEN_HTTP_A_${suffix}`;
const TOKEN_ENV_B = `REDCAP_TOKEN_HTTP_B_${suffix}`;
const TOKEN_A = 'AAAA0000AAAA0000AAAA0000AAAA0000';
const TOKEN_B = 'BBBB1111BBBB1111BBBB1111BBBB1111';

const multipart = (files: Record<string, MultipartFile>) => multipartBody({ files });

/** A loopback REDCap that answers each token with its own project's metadata, so a wrong token shows. */
async function startFakeRedcap(): Promise<{ url: string; tokensSeen: string[]; close(): Promise<void> }> {
  const tokensSeen: string[] = [];
  const projects: Record<string, Record<string, unknown[]>> = {
    [TOKEN_A]: {
      metadata: [
        { field_name: 'record_id', form_name: 'enrolment', field_type: 'text', field_label: '受试者编号 Subject ID', identifier: '' },
        { field_name: 'subject_name', form_name: 'enrolment', field_type: 'text', field_label: '姓名 Name', identifier: 'y' },
        { field_name: 'age', form_name: 'enrolment', field_type: 'text', field_label: '年龄 Age', text_validation_type_or_show_slider_number: 'integer', text_validation_min: '18', text_validation_max: '75', identifier: '' },
      ],
      event: [{ event_name: 'V1 Baseline', arm_num: 1, unique_event_name: 'v1_arm_1', custom_event_label: '', event_id: 41 }],
      arm: [{ arm_num: 1, name: 'Drug' }],
      record: [{ record_id: 'A001', redcap_event_name: 'v1_arm_1', redcap_data_access_group: 'site_01', subject_name: '张三', age: '17', enrolment_complete: '2' }],
    },
  };
  const server: Server = createServer((req, res) => {
    let raw = '';
    req.on('data', (chunk: Buffer) => (raw += chunk.toString('utf8')));
    req.on('end', () => {
      const params = new URLSearchParams(raw);
      tokensSeen.push(params.get('token') ?? '');
      const project = projects[params.get('token') ?? ''];
      if (!project) return void res.writeHead(403, { 'content-type': 'application/json' }).end(JSON.stringify({ error: 'You do not have permissions to use the API' }));
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(project[params.get('content') ?? ''] ?? []));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/`, tokensSeen, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

describe.each(testEngines())('per-project REDCap settings and CSV imports over HTTP on %s', (engine) => {
  let ctx: Awaited<ReturnType<typeof buildTestContext>>;
  let app: App;
  let redcap: Awaited<ReturnType<typeof startFakeRedcap>>;
  const auth: Record<'admin' | 'piA' | 'piB' | 'coordinatorA' | 'viewerA', { authorization: string }> = {} as never;

  beforeAll(async () => {
    redcap = await startFakeRedcap();
    // The loopback REDCap speaks plain http, which only the administrator's REDCAP_ALLOW_HTTP permits, on a
    // loopback address, which only REDCAP_ALLOWED_HOSTS permits.
    ctx = await buildTestContext({ engine, env: { REDCAP_ALLOW_HTTP: 'true', REDCAP_ALLOWED_HOSTS: '127.0.0.1' } });
    app = await buildServer(ctx, { serveConsole: false });
    await ctx.users.createProject({ id: 'trial-a', name: 'Trial A' });
    await ctx.users.createProject({ id: 'trial-b', name: 'Trial B' });
    const people = [
      ['admin', 'admin', []],
      ['piA', 'pi', ['trial-a']],
      ['piB', 'pi', ['trial-b']],
      ['coordinatorA', 'coordinator', ['trial-a']],
      ['viewerA', 'viewer', ['trial-a']],
    ] as const;
    for (const [name, role, projects] of people) {
      const { user, token } = await ctx.users.create({ name, role });
      for (const projectId of projects) await ctx.users.addMember(projectId, user.id);
      auth[name] = { authorization: `Bearer ${token}` };
    }
  });

  afterAll(async () => {
    delete process.env[TOKEN_ENV_A];
    delete process.env[TOKEN_ENV_B];
    await app?.close();
    await ctx?.close();
    await redcap?.close();
  });

  const configure = (who: keyof typeof auth, projectId: string, body: Record<string, unknown>) =>
    app.inject({ method: 'PUT', url: `/api/iit/projects/${projectId}/redcap`, headers: auth[who], payload: body });
  const sync = (who: keyof typeof auth, projectId: string) => app.inject({ method: 'POST', url: `/api/iit/projects/${projectId}/redcap-sync`, headers: auth[who] });

  it('answers sync without configuration with 409 CONFIG_MISSING saying exactly what to set', async () => {
    const unconfigured = await sync('piA', 'trial-a');
    expect(unconfigured.statusCode).toBe(409);
    expect(unconfigured.json()).toMatchObject({ code: 'CONFIG_MISSING', details: { missing: ['apiUrl', 'tokenEnv'] } });
    expect(unconfigured.json().message).toContain('environment variable REDCAP_TOKEN_TRIAL_A and binds it with PUT /api/iit/projects/trial-a/redcap {"apiUrl"');

    expect((await configure('admin', 'trial-a', { apiUrl: redcap.url, tokenEnv: TOKEN_ENV_A })).statusCode).toBe(200);
    const unset = await sync('piA', 'trial-a');
    expect(unset.statusCode).toBe(409);
    expect(unset.json()).toMatchObject({ code: 'CONFIG_MISSING', details: { missing: [TOKEN_ENV_A] } });
    expect(unset.json().message).toContain(`The environment variable ${TOKEN_ENV_A}, which holds the REDCap API token of project "trial-a", is not set on the server. Set ${TOKEN_ENV_A}`);
    expect(redcap.tokensSeen).toEqual([]);
  });

  it('lets no project member bind the REDCap API, PI included; a coordinator may not sync either', async () => {
    for (const who of ['piA', 'coordinatorA', 'viewerA'] as const) {
      const configured = await configure(who, 'trial-a', { apiUrl: 'https://evil.example.org/api/', tokenEnv: TOKEN_ENV_A });
      expect(configured.statusCode).toBe(403);
      expect(configured.json()).toMatchObject({ code: 'FORBIDDEN', details: { needs: ['admin'] } });
      expect(configured.json().message).toContain('Only admins may do this');
    }

    process.env[TOKEN_ENV_A] = TOKEN_A;
    const synced = await sync('coordinatorA', 'trial-a');
    expect(synced.statusCode).toBe(403);
    expect(synced.json().message).toContain('may sync from REDCap');
    expect(redcap.tokensSeen).toEqual([]);
    // Members may still see the settings, and that the token is set, but never the token.
    const shown = await app.inject({ method: 'GET', url: '/api/iit/projects/trial-a/redcap', headers: auth.coordinatorA });
    expect(shown.json()).toEqual(expect.objectContaining({ configured: true, apiUrl: redcap.url, tokenEnv: TOKEN_ENV_A, tokenSet: true, updatedBy: 'admin' }));
    expect(shown.body).not.toContain(TOKEN_A);
  });

  it("never sends a server variable where a PI points it: another trial's unclaimed token, HOME, or anything outside REDCAP_TOKEN_", async () => {
    // What the attacker did: a listener of their own, then PUT .../redcap naming a variable, then POST .../redcap-sync.
    const listener = await startFakeRedcap();
    const unclaimed = `REDCAP_TOKEN_PROJC_${suffix}`;
    process.env[unclaimed] = 'CCCC2222CCCC2222CCCC2222CCCC2222';
    try {
      for (const tokenEnv of [unclaimed, 'HOME', 'PATH']) {
        const put = await configure('piB', 'trial-b', { apiUrl: listener.url, tokenEnv });
        expect(put.statusCode).toBe(403);
        expect((await sync('piB', 'trial-b')).statusCode).toBe(409);
      }
      expect(listener.tokensSeen).toEqual([]);
      expect((await app.inject({ method: 'GET', url: '/api/iit/projects/trial-b/redcap', headers: auth.piB })).json()).toMatchObject({ configured: false, tokenSet: false });

      // Not even an admin binds a variable outside the REDCAP_TOKEN_ family; the token is never echoed either.
      for (const tokenEnv of ['HOME', 'DATABASE_URL', 'LLM_API_KEY', TOKEN_A.toLowerCase()]) {
        const put = await configure('admin', 'trial-b', { apiUrl: listener.url, tokenEnv });
        expect(put.statusCode).toBe(400);
        expect(put.json().details.problems).toEqual([expect.stringContaining('tokenEnv: must be the NAME of a server environment variable starting with REDCAP_TOKEN_')]);
        expect(put.body).not.toContain(TOKEN_A.toLowerCase());
      }
      expect(listener.tokensSeen).toEqual([]);
    } finally {
      delete process.env[unclaimed];
      await listener.close();
    }
  });

  it('keeps a PI of project B out of project A, and a binding collision does not name the other project', async () => {
    expect((await configure('piB', 'trial-a', { apiUrl: 'https://evil.example.org/api/', tokenEnv: TOKEN_ENV_B })).statusCode).toBe(403);
    expect((await sync('piB', 'trial-a')).statusCode).toBe(404);
    expect((await app.inject({ method: 'GET', url: '/api/iit/projects/trial-a/redcap', headers: auth.piB })).statusCode).toBe(404);

    // Binding project B to project A's token variable would pull A's data into B: refused, even for an admin.
    const borrowed = await configure('admin', 'trial-b', { apiUrl: redcap.url, tokenEnv: TOKEN_ENV_A });
    expect(borrowed.statusCode).toBe(409);
    expect(borrowed.json().message).toContain(`The variable ${TOKEN_ENV_A} is already bound to another project`);
    expect(borrowed.body).not.toContain('trial-a');
    const settingsA = await app.inject({ method: 'GET', url: '/api/iit/projects/trial-a/redcap', headers: auth.piA });
    expect(settingsA.json()).toMatchObject({ apiUrl: redcap.url, tokenEnv: TOKEN_ENV_A });
    expect(redcap.tokensSeen).toEqual([]);
  });

  it('refuses settings that are not a URL and a REDCAP_TOKEN_ variable name, naming each field; defaults the variable to the project id', async () => {
    const bad = await configure('admin', 'trial-a', { apiUrl: 'redcap.example.org', tokenEnv: TOKEN_A.toLowerCase() });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().code).toBe('VALIDATION_FAILED');
    expect(bad.json().details.problems).toEqual([
      expect.stringContaining('apiUrl: "redcap.example.org" is not an http(s) URL'),
      expect.stringContaining('tokenEnv: must be the NAME of a server environment variable starting with REDCAP_TOKEN_'),
    ]);
    // A token pasted by mistake is never echoed back whole.
    expect(bad.body).not.toContain(TOKEN_A.toLowerCase());
    const huge = await configure('admin', 'trial-a', { apiUrl: `https://redcap.example.org/${'a'.repeat(1024 * 1024)}` });
    expect(huge.statusCode).toBe(400);
    expect(huge.body.length).toBeLessThan(4096);

    const defaulted = await configure('admin', 'trial-c-unbound', { apiUrl: 'https://redcap.example.org/api/' });
    expect(defaulted.statusCode).toBe(404);
    await ctx.users.createProject({ id: 'trial-c', name: 'Trial C' });
    const bound = await configure('admin', 'trial-c', { apiUrl: 'https://redcap.example.org/api/' });
    expect(bound.statusCode, bound.body).toBe(200);
    expect(bound.json()).toMatchObject({ tokenEnv: 'REDCAP_TOKEN_TRIAL_C', tokenSet: false });
  });

  it('refuses a REDCap API URL on a link-local, private or loopback host the administrator did not name (issue 32: the server sends the token there)', async () => {
    const refusals = {
      'https://169.254.169.254/latest/meta-data/': /link-local/,
      'https://10.0.0.5/api/': /private/,
      'https://localhost/api/': /localhost/,
      'https://[::ffff:a9fe:a9fe]/api/': /link-local/,
    };
    for (const [apiUrl, why] of Object.entries(refusals)) {
      const refused = await configure('admin', 'trial-a', { apiUrl });
      expect(refused.statusCode, apiUrl).toBe(400);
      const [problem] = refused.json().details.problems as string[];
      expect(problem, apiUrl).toMatch(why);
      expect(problem, apiUrl).toContain('REDCAP_ALLOWED_HOSTS');
    }
    // The host the administrator named is accepted, as the other tests' loopback REDCap shows.
    await ctx.users.createProject({ id: 'trial-d', name: 'Trial D' });
    expect((await configure('admin', 'trial-d', { apiUrl: redcap.url })).statusCode).toBe(200);
  });

  it("syncs with the project's own token only, stores the identifier flag and arms, and audits the settings", async () => {
    process.env[TOKEN_ENV_A] = TOKEN_A;
    const synced = await sync('piA', 'trial-a');
    expect(synced.statusCode, synced.body).toBe(201);
    expect(synced.json()).toMatchObject({ fields: 3, events: 1, arms: 1, records: { created: 1 } });
    expect(synced.json().warnings).toEqual([expect.objectContaining({ recordId: 'A001', field: 'age', value: 17, message: 'REDCap API records line 2, field age: 17 is below the validation minimum 18; imported, QC will report it' })]);
    expect(new Set(redcap.tokensSeen)).toEqual(new Set([TOKEN_A]));
    expect(synced.body).not.toContain(TOKEN_A);

    const store = createTrialStore(ctx.db);
    expect(await store.identifierFields('trial-a')).toEqual(['subject_name']);
    expect(await store.getArms('trial-a')).toEqual([{ armNum: 1, name: 'Drug' }]);

    const audit = await app.inject({ method: 'GET', url: '/api/iit/projects/trial-a/audit?entityType=settings', headers: auth.piA });
    expect(audit.json().entries).toEqual([expect.objectContaining({ entityType: 'settings', entityId: 'redcap', action: 'redcap.configure', actor: 'admin', oldValue: null, newValue: { apiUrl: redcap.url, tokenEnv: TOKEN_ENV_A } })]);

    // An admin may configure and sync any project; B's own variable gives B's token, which this REDCap refuses.
    process.env[TOKEN_ENV_B] = TOKEN_B;
    expect((await configure('admin', 'trial-b', { apiUrl: redcap.url, tokenEnv: TOKEN_ENV_B })).statusCode).toBe(200);
    const syncedB = await sync('admin', 'trial-b');
    expect(syncedB.statusCode).toBe(502);
    expect(syncedB.json().message).toContain(`check ${TOKEN_ENV_B}`);
    expect(syncedB.body).not.toContain(TOKEN_B);
  });

  it('imports REDCap 14 events with an arms file through multipart, and refuses events in an unknown arm', async () => {
    const files = {
      dictionary: { name: 'DEMO_DataDictionary_2025-03-01.csv', content: testFile('redcap-dictionary.csv') },
      events: { name: 'DEMO_Events_2025-03-01.csv', content: testFile('redcap14-events-scheduled.csv') },
      records: { name: 'DEMO_DATA_2025-03-01.csv', content: testFile('redcap-records.csv') },
    };
    const withOneArm = multipart({ ...files, arms: { name: 'DEMO_Arms.csv', content: 'arm_num,name\n1,Drug\n' } });
    const refused = await app.inject({ method: 'POST', url: '/api/iit/projects/trial-b/imports', headers: { ...auth.piB, ...withOneArm.headers }, payload: withOneArm.payload });
    expect(refused.statusCode).toBe(422);
    // Named as uploaded, not "events.csv" (issue 32).
    expect(refused.json().message).toContain('DEMO_Events_2025-03-01.csv line 4, field arm_num: the event is in arm 2, but DEMO_Arms.csv defines only arm 1');

    const upload = multipart({ ...files, arms: { name: 'DEMO_Arms.csv', content: testFile('redcap14-arms.csv') } });
    const imported = await app.inject({ method: 'POST', url: '/api/iit/projects/trial-b/imports', headers: { ...auth.piB, ...upload.headers }, payload: upload.payload });
    expect(imported.statusCode, imported.body).toBe(201);
    expect(imported.json()).toMatchObject({ events: 4, arms: 2, warnings: [] });
    const events = await createTrialStore(ctx.db).getEvents('trial-b');
    expect(events.map((event) => [event.eventName, event.armNum])).toEqual([['v1_arm_1', 1], ['v2_arm_1', 1], ['v1_arm_2', 2], ['v2_arm_2', 2]]);
  });

  it('imports GB18030 files as Chinese text, and refuses an undecodable file by its name', async () => {
    const gb = (name: string) => iconv.encode(testFile(name).toString('utf8').replace(/^\uFEFF/, ''), 'gb18030');
    const upload = multipart({ dictionary: { name: '数据字典.csv', content: gb('redcap-dictionary.csv') }, events: { name: 'events.csv', content: gb('redcap-events.csv') }, records: { name: 'records.csv', content: gb('redcap-records.csv') } });
    const imported = await app.inject({ method: 'POST', url: '/api/iit/projects/trial-a/imports', headers: { ...auth.coordinatorA, ...upload.headers }, payload: upload.payload });
    expect(imported.statusCode, imported.body).toBe(201);
    const fields = await createTrialStore(ctx.db).getDictionary('trial-a');
    expect(fields.find((field) => field.fieldName === 'age')?.label).toBe('年龄（岁）Age, years');

    const big5 = multipart({ dictionary: { name: '字典-big5.csv', content: iconv.encode(testFile('redcap-dictionary.csv').toString('utf8'), 'big5') }, records: { name: 'records.csv', content: testFile('redcap-records.csv') } });
    const refused = await app.inject({ method: 'POST', url: '/api/iit/projects/trial-a/imports', headers: { ...auth.coordinatorA, ...big5.headers }, payload: big5.payload });
    expect(refused.statusCode).toBe(400);
    expect(refused.json()).toMatchObject({ code: 'VALIDATION_FAILED', details: { field: 'dictionary', filename: '字典-big5.csv' } });
    expect(refused.json().message).toContain('save it as "CSV UTF-8 (Comma delimited)"');
  });
});
