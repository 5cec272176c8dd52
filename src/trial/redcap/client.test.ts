import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ClinAgentError } from '../../core/errors.js';
import { createRedcapClient } from './client.js';

const TOKEN = '0123456789ABCDEF0123456789ABCDEF';

const METADATA = [
  { field_name: 'record_id', form_name: 'enrolment', section_header: '', field_type: 'text', field_label: '受试者编号 Subject ID', select_choices_or_calculations: '', text_validation_type_or_show_slider_number: '', text_validation_min: '', text_validation_max: '', required_field: '' },
  { field_name: 'age', form_name: 'enrolment', section_header: '', field_type: 'text', field_label: '年龄 Age', select_choices_or_calculations: '', text_validation_type_or_show_slider_number: 'integer', text_validation_min: '0', text_validation_max: '120', required_field: 'y' },
  { field_name: 'sex', form_name: 'enrolment', section_header: '', field_type: 'radio', field_label: '性别 Sex', select_choices_or_calculations: '1, Male | 2, Female', text_validation_type_or_show_slider_number: '', text_validation_min: '', text_validation_max: '', required_field: 'y' },
  { field_name: 'phone', form_name: 'enrolment', section_header: '', field_type: 'text', field_label: '电话 Phone', select_choices_or_calculations: '', text_validation_type_or_show_slider_number: 'phone', text_validation_min: '', text_validation_max: '', identifier: 'y', required_field: '' },
];
const EVENTS = [
  { event_name: 'V1 Baseline', arm_num: 1, day_offset: 0, offset_min: 0, offset_max: 0, unique_event_name: 'v1_arm_1', custom_event_label: null },
  { event_name: 'V2 Week 4', arm_num: 1, day_offset: 28, offset_min: 3, offset_max: 3, unique_event_name: 'v2_arm_1', custom_event_label: null },
];
// What REDCap 14 answers to content=arm.
const ARMS = [{ arm_num: 1, name: 'Drug 药物组' }];
const RECORDS = [
  { record_id: 'S001', redcap_event_name: 'v1_arm_1', redcap_data_access_group: 'site_01', age: '45', sex: '1', phone: '', enrolment_complete: '2' },
  { record_id: 'S001', redcap_event_name: 'v2_arm_1', redcap_data_access_group: 'site_01', age: '', sex: '', phone: '', enrolment_complete: '' },
];

interface FakeRedcap {
  url: string;
  requests: Array<Record<string, string>>;
  /** Replaces the answer to one content type. */
  answers: Map<string, { status: number; body: string }>;
  close(): Promise<void>;
}

/** A REDCap API on 127.0.0.1 that checks the token and answers exports as REDCap does. */
async function startFakeRedcap(): Promise<FakeRedcap> {
  const requests: Array<Record<string, string>> = [];
  const answers = new Map<string, { status: number; body: string }>();
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let raw = '';
    req.on('data', (chunk: Buffer) => (raw += chunk.toString('utf8')));
    req.on('end', () => {
      const params = Object.fromEntries(new URLSearchParams(raw));
      requests.push({ ...params, method: req.method ?? '', contentType: req.headers['content-type'] ?? '' });
      const send = (status: number, body: string) => res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' }).end(body);
      if (params.token !== TOKEN) return send(403, JSON.stringify({ error: 'You do not have permissions to use the API' }));
      const override = answers.get(params.content ?? '');
      if (override) return send(override.status, override.body);
      const data = { metadata: METADATA, event: EVENTS, arm: ARMS, record: RECORDS }[params.content ?? ''];
      return data ? send(200, JSON.stringify(data)) : send(400, JSON.stringify({ error: 'The value of the parameter "content" is not valid' }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/api/`, requests, answers, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

async function caught(promise: Promise<unknown>): Promise<ClinAgentError> {
  try {
    await promise;
  } catch (error) {
    if (ClinAgentError.isInstance(error)) return error;
    throw error;
  }
  throw new Error('expected the call to fail');
}

/** The token must not be anywhere a log or an API response could pick it up. */
function expectNoToken(error: ClinAgentError): void {
  expect(`${error.message}\n${error.stack}\n${JSON.stringify(error)}\n${JSON.stringify(error.details)}`).not.toContain(TOKEN);
}

describe('createRedcapClient', () => {
  let redcap: FakeRedcap;

  beforeAll(async () => {
    redcap = await startFakeRedcap();
  });

  afterAll(async () => {
    await redcap.close();
  });

  it('exports metadata, events and records in the shapes the CSV import produces', async () => {
    redcap.answers.clear();
    const client = createRedcapClient({ url: redcap.url, token: TOKEN });

    const project = await client.exportProject();

    expect(project.fields.map((field) => [field.fieldName, field.fieldType, field.required, field.identifier])).toEqual([
      ['record_id', 'text', false, false],
      ['age', 'integer', true, false],
      ['sex', 'radio', true, false],
      ['phone', 'text', false, true],
    ]);
    expect(project.events).toEqual([
      { eventName: 'v1_arm_1', label: 'V1 Baseline', dayOffset: 0, windowBefore: 0, windowAfter: 0, armNum: 1 },
      { eventName: 'v2_arm_1', label: 'V2 Week 4', dayOffset: 28, windowBefore: 3, windowAfter: 3, armNum: 1 },
    ]);
    expect(project.arms).toEqual([{ armNum: 1, name: 'Drug 药物组' }]);
    expect(project.records).toEqual([
      { recordId: 'S001', eventName: 'v1_arm_1', site: 'site_01', data: { age: 45, sex: '1', phone: null, enrolment_complete: '2' } },
      { recordId: 'S001', eventName: 'v2_arm_1', site: 'site_01', data: { age: null, sex: null, phone: null, enrolment_complete: null } },
    ]);
    expect(project.warnings).toEqual([]);
    const recordRequest = redcap.requests.find((request) => request.content === 'record');
    expect(recordRequest).toMatchObject({ method: 'POST', contentType: 'application/x-www-form-urlencoded', token: TOKEN, format: 'json', type: 'flat', rawOrLabel: 'raw', exportDataAccessGroups: 'true' });
    expect(redcap.requests.map((request) => request.content).sort()).toEqual(['arm', 'event', 'metadata', 'record']);
  });

  it('asks for no arms in a classic project, and returns values outside their bounds as warnings', async () => {
    redcap.requests.length = 0;
    redcap.answers.set('event', { status: 400, body: JSON.stringify({ error: 'You cannot export events for classic projects' }) });
    redcap.answers.set('record', { status: 200, body: JSON.stringify([{ record_id: 'S009', redcap_data_access_group: 'site_01', age: '130', sex: '1', phone: '', enrolment_complete: '2' }]) });

    const project = await createRedcapClient({ url: redcap.url, token: TOKEN }).exportProject();

    expect(project.events).toEqual([]);
    expect(project.arms).toEqual([]);
    expect(redcap.requests.map((request) => request.content)).not.toContain('arm');
    expect(project.records[0]?.data.age).toBe(130);
    expect(project.warnings).toEqual([
      { line: 2, recordId: 'S009', event: '', field: 'age', value: 130, min: '0', max: '120', message: 'REDCap API records line 2, field age: 130 is above the validation maximum 120; imported, QC will report it' },
    ]);
    redcap.answers.clear();
  });

  it('refuses an export whose events name an arm the arms export lacks', async () => {
    redcap.answers.set('arm', { status: 200, body: JSON.stringify([{ arm_num: 2, name: 'Placebo' }]) });
    const error = await caught(createRedcapClient({ url: redcap.url, token: TOKEN }).exportProject());
    expect(error.code).toBe('IMPORT_INVALID');
    expect(error.message).toContain('REDCap API events line 2, field arm_num: the event is in arm 1, but the REDCap API arms export defines only arm 2');
    redcap.answers.clear();
  });

  it('reports a refused token as UPSTREAM_FAILED without the token', async () => {
    const client = createRedcapClient({ url: redcap.url, token: 'FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF', settingNames: { token: 'REDCAP_TOKEN_DEMO' } });

    const error = await caught(client.exportMetadata());

    expect(error.code).toBe('UPSTREAM_FAILED');
    expect(error.status).toBe(502);
    expect(error.message).toContain('REDCap refused the token (check REDCAP_TOKEN_DEMO)');
    expect(error.details).toMatchObject({ status: 403 });
    expect(error.message).not.toContain('FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF');
  });

  it('masks the token when REDCap echoes it in an error answer', async () => {
    redcap.answers.set('metadata', { status: 500, body: JSON.stringify({ error: `Internal error while handling token=${TOKEN}` }) });
    const client = createRedcapClient({ url: redcap.url, token: TOKEN });

    const error = await caught(client.exportMetadata());

    expect(error.message).toContain('answered HTTP 500 to the metadata export: Internal error while handling token=[redacted]');
    expectNoToken(error);
    redcap.answers.clear();
  });

  it('names the URL, and not the token, when REDCap cannot be reached', async () => {
    const closed = await startFakeRedcap();
    await closed.close();
    const client = createRedcapClient({ url: `${closed.url}?token=${TOKEN}`, token: TOKEN });

    const error = await caught(client.exportRecords({ fields: [], events: [] }));

    expect(error.code).toBe('UPSTREAM_FAILED');
    expect(error.message).toContain(`Could not reach REDCap at ${closed.url}`);
    expect(error.message).toContain('ECONNREFUSED');
    expectNoToken(error);
  });

  it('stops waiting after timeoutMs', async () => {
    const neverAnswers = createServer(() => undefined);
    await new Promise<void>((resolve) => neverAnswers.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(neverAnswers.address() as AddressInfo).port}/api/`;
    try {
      const error = await caught(createRedcapClient({ url, token: TOKEN, timeoutMs: 200 }).exportEvents());
      expect(error.message).toContain('no answer within 200 ms');
    } finally {
      neverAnswers.closeAllConnections();
      await new Promise((resolve) => neverAnswers.close(resolve));
    }
  });

  it('reports bad exported values like a CSV import, with the row REDCap\'s CSV would show', async () => {
    redcap.answers.set('record', { status: 200, body: JSON.stringify([...RECORDS, { record_id: 'S002', redcap_event_name: 'v1_arm_1', redcap_data_access_group: 'site_02', age: 'forty', sex: '1', enrolment_complete: '2' }]) });
    const client = createRedcapClient({ url: redcap.url, token: TOKEN });
    const schema = { fields: await client.exportMetadata(), events: await client.exportEvents() };

    const error = await caught(client.exportRecords(schema));

    expect(error.code).toBe('IMPORT_INVALID');
    expect(error.message).toContain('REDCap API records line 4, field age: "forty" is not an integer');
    redcap.answers.clear();
  });

  it('explains an answer that is not JSON, such as a login page', async () => {
    redcap.answers.set('metadata', { status: 200, body: '<html><body>Log in to REDCap</body></html>' });
    const error = await caught(createRedcapClient({ url: redcap.url, token: TOKEN, settingNames: { url: 'the apiUrl of project "demo"' } }).exportMetadata());
    expect(error.message).toContain('is not JSON. Check that the apiUrl of project "demo" is the API endpoint');
    redcap.answers.clear();
  });

  it('returns no events for a classic project', async () => {
    redcap.answers.set('event', { status: 400, body: JSON.stringify({ error: 'You cannot export events for classic projects' }) });
    expect(await createRedcapClient({ url: redcap.url, token: TOKEN }).exportEvents()).toEqual([]);
    redcap.answers.clear();
  });

  it('fails at construction when the token or URL is missing, naming the setting', () => {
    const settingNames = { url: 'the apiUrl of project "demo"', token: 'REDCAP_TOKEN_DEMO' };
    expect(() => createRedcapClient({ url: redcap.url, token: '', settingNames })).toThrow(expect.objectContaining({ code: 'CONFIG_MISSING', details: { field: 'REDCAP_TOKEN_DEMO' } }));
    expect(() => createRedcapClient({ url: 'redcap.example.org', token: TOKEN, settingNames })).toThrow(expect.objectContaining({ code: 'CONFIG_INVALID', details: { field: 'the apiUrl of project "demo"' } }));
  });
});
