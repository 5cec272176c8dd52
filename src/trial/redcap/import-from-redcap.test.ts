import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openTestDatabase, testEngines } from '../../testing/test-database.js';
import { createTrialStore, type TrialStore } from '../store/trial-store.js';
import { createRedcapClient } from './client.js';
import { importFromRedcap } from './import-from-redcap.js';

const TOKEN = 'ABCDEF0123456789ABCDEF0123456789';
const answers: Record<string, unknown[]> = {
  metadata: [
    { field_name: 'record_id', form_name: 'enrolment', field_type: 'text', field_label: 'Subject', text_validation_type_or_show_slider_number: '', required_field: '' },
    { field_name: 'age', form_name: 'enrolment', field_type: 'text', field_label: 'Age', text_validation_type_or_show_slider_number: 'integer', required_field: 'y' },
  ],
  event: [{ event_name: 'Baseline', arm_num: 1, day_offset: 0, offset_min: 0, offset_max: 0, unique_event_name: 'baseline_arm_1' }],
  arm: [{ arm_num: 1, name: 'Arm 1' }],
  record: [{ record_id: '1', redcap_event_name: 'baseline_arm_1', redcap_data_access_group: 'site_a', age: '52', enrolment_complete: '2' }],
};

describe.each(testEngines())('importFromRedcap on %s', (engine) => {
  let server: Server;
  let url: string;
  let store: TrialStore;
  let close: () => Promise<void>;

  beforeAll(async () => {
    // A loopback REDCap answering the three exports; the client itself is tested in client.test.ts.
    server = createServer((req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
      req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(answers[new URLSearchParams(body).get('content') ?? ''] ?? [])));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/`;
    const database = await openTestDatabase({ engine });
    close = () => database.close();
    store = createTrialStore(database.db);
  });

  afterAll(async () => {
    await close?.();
    await new Promise((resolve) => server.close(resolve));
  });

  it('writes the API export as one audited change, and nothing on a repeat', async () => {
    await store.ensureProject({ id: 'api-trial', name: 'API trial' });
    const client = createRedcapClient({ url, token: TOKEN });

    const first = await importFromRedcap(store, 'api-trial', client, 'sync');
    const second = await importFromRedcap(store, 'api-trial', client, 'sync');

    expect(first).toEqual({ fields: 2, events: 1, arms: 1, records: { created: 1, updated: 0, unchanged: 0 }, isDictionaryChanged: true, isEventsChanged: true, isArmsChanged: true, warnings: [] });
    expect(second).toEqual({ fields: 2, events: 1, arms: 1, records: { created: 0, updated: 0, unchanged: 1 }, isDictionaryChanged: false, isEventsChanged: false, isArmsChanged: false, warnings: [] });
    expect(await store.getArms('api-trial')).toEqual([{ armNum: 1, name: 'Arm 1' }]);
    expect(await store.getRecord('api-trial', '1')).toEqual([expect.objectContaining({ site: 'site_a', data: { age: 52, enrolment_complete: '2' } })]);
    expect((await store.listAudit('api-trial')).map((entry) => [entry.action, entry.reason])).toEqual([
      ['project.create', ''],
      ['dictionary.replace', 'REDCap API export'],
      ['arms.replace', 'REDCap API export'],
      ['events.replace', 'REDCap API export'],
      ['record.create', 'REDCap API export'],
    ]);
  });
});
