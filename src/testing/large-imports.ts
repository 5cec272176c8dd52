import { get } from 'node:http';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { setTimeout as pause } from 'node:timers/promises';

/** The header row of a REDCap data dictionary export. */
export const REDCAP_DICTIONARY_HEADER =
  'Variable / Field Name,Form Name,Section Header,Field Type,Field Label,"Choices, Calculations, OR Slider Labels",Field Note,Text Validation Type OR Show Slider Number,Text Validation Min,Text Validation Max,Identifier?,Branching Logic (Show field only if...),Required Field?';

/** A dictionary of `count` text fields on one form: record_id, then f1, f2, ... */
export function textFieldDictionary(count: number, label = (i: number) => `Field ${i}`): string {
  const lines = [REDCAP_DICTIONARY_HEADER, 'record_id,baseline,,text,Subject ID,,,,,,,,'];
  for (let i = 1; i < count; i++) lines.push(`f${i},baseline,,text,${label(i)},,,,,,,,`);
  return `${lines.join('\n')}\n`;
}

/** `rows` records of every field of a textFieldDictionary(`fields`), each value `cell` characters long. */
export function recordsOf(fields: number, rows: number, cell: number): Buffer {
  const header = ['record_id', ...Array.from({ length: fields - 1 }, (_, i) => `f${i + 1}`)].join(',');
  const values = Array.from({ length: fields - 1 }, (_, i) => `v${String(i).padStart(cell - 1, '0')}`.slice(0, cell)).join(',');
  const lines = [header];
  for (let row = 0; row < rows; row++) lines.push(`S${String(row).padStart(5, '0')},${values}`);
  return Buffer.from(`${lines.join('\n')}\n`);
}

/** The ODM of issue 32: `elements` empty elements (1.25 million is about 5 MB) around a minimal study. */
export function emptyElementsOdm(elements: number): Buffer {
  return Buffer.concat([
    Buffer.from('<?xml version="1.0" encoding="UTF-8"?>\n<ODM xmlns="http://www.cdisc.org/ns/odm/v1.3" ODMVersion="1.3.2" FileOID="f" FileType="Snapshot"><Study OID="S"><GlobalVariables><StudyName>S</StudyName><StudyDescription>S</StudyDescription><ProtocolName>S</ProtocolName></GlobalVariables><MetaDataVersion OID="v1" Name="v1"></MetaDataVersion></Study><ClinicalData StudyOID="S" MetaDataVersionOID="v1">'),
    Buffer.alloc(elements * 4, '<a/>'),
    Buffer.from('</ClinicalData></ODM>\n'),
  ]);
}

/** GET /api/health on a connection of its own, as a load balancer's probe asks: its status and how long it took. */
export function probeHealth(base: string): Promise<{ status: number; ms: number }> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    get(`${base}/api/health`, { agent: false }, (response) => {
      response.resume();
      response.on('end', () => resolve({ status: response.statusCode ?? 0, ms: performance.now() - started }));
    }).on('error', reject);
  });
}

/**
 * Runs `request` while a monitor asks GET /api/health every 100 ms, its first answer in before the request starts, as
 * a load balancer's probe would; answers with the request's result, the longest the event loop was held while it ran
 * and how many health answers came. A health answer other than 200 fails it.
 */
export async function whileHealthPolled<T>(base: string, request: () => Promise<T>): Promise<{ result: T; longestLoopDelayMs: number; healthAnswers: number }> {
  let running = true;
  let healthAnswers = 0;
  let firstAnswer!: () => void;
  const answered = new Promise<void>((resolve) => (firstAnswer = resolve));
  const poll = (async () => {
    while (running) {
      const health = await probeHealth(base);
      if (health.status !== 200) throw new Error(`GET /api/health answered ${health.status} during the request`);
      healthAnswers++;
      firstAnswer();
      await pause(100); // a monitor's pace, not a wait for anything
    }
  })();
  await Promise.race([answered, poll]);
  const loopDelay = monitorEventLoopDelay({ resolution: 10 });
  loopDelay.enable();
  try {
    const result = await request();
    return { result, longestLoopDelayMs: loopDelay.max / 1e6, healthAnswers };
  } finally {
    loopDelay.disable();
    running = false;
    await poll;
  }
}

/** REDCap API's metadata answer (content=metadata, JSON) for a textFieldDictionary(`count`): record_id, f1, f2, ... */
export function textFieldMetadataJson(count: number): string {
  const field = (name: string, label: string) => ({ field_name: name, form_name: 'baseline', section_header: '', field_type: 'text', field_label: label, select_choices_or_calculations: '', field_note: '', text_validation_type_or_show_slider_number: '', text_validation_min: '', text_validation_max: '', identifier: '', branching_logic: '', required_field: '' });
  return JSON.stringify([field('record_id', 'Subject ID'), ...Array.from({ length: count - 1 }, (_, i) => field(`f${i + 1}`, `Field ${i + 1}`))]);
}

/**
 * REDCap API's records answer (content=record, type=flat, JSON) with the values of recordsOf(`fields`, `rows`,
 * `cell`): built as one Buffer, since an answer of tens of MB is what is being tested.
 */
export function recordsJsonOf(fields: number, rows: number, cell: number): Buffer {
  const values = Array.from({ length: fields - 1 }, (_, i) => `,"f${i + 1}":${JSON.stringify(`v${String(i).padStart(cell - 1, '0')}`.slice(0, cell))}`).join('');
  const items: string[] = [];
  for (let row = 0; row < rows; row++) items.push(`{"record_id":"S${String(row).padStart(5, '0')}","redcap_data_access_group":"site_a"${values},"baseline_complete":"2"}`);
  return Buffer.from(`[${items.join(',')}]`);
}
