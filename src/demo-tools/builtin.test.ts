import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { packageRoot } from '../core/paths.js';
import { createToolRegistry } from '../core/tools/registry.js';
import { registerBuiltinTools } from './builtin.js';
import { loadDemoRecords, type DemoRecordSet } from './demo-records.js';

/** The demo file read directly, so expectations come from the data rather than from the tool under test. */
const demo = JSON.parse(readFileSync(path.join(packageRoot(), 'data', 'demo', 'records.json'), 'utf8')) as DemoRecordSet;
const fields = Object.keys(demo.records[0]!).filter((field) => field !== 'subject_id');
const isBlank = (value: unknown) => value === null || value === undefined || (typeof value === 'string' && value.trim() === '');
const subject = (id: string) => demo.records.find((record) => record.subject_id === id)!;
const plantedGaps = demo.records.flatMap((record) => fields.filter((field) => isBlank(record[field])).map((field) => `${record.subject_id}.${field}`));

function builtinRegistry() {
  const registry = createToolRegistry();
  registerBuiltinTools(registry, loadDemoRecords());
  return registry;
}

interface MissingReport {
  records_checked: number;
  cells_checked: number;
  missing_count: number;
  completion_rate: number | null;
  missing: Array<{ subject_id: string; site: string; field: string }>;
}

describe('registerBuiltinTools', () => {
  it('registers the four seed tools with JSON Schema parameters', () => {
    const registry = builtinRegistry();

    expect(registry.list().map((tool) => tool.name)).toEqual(['calculate_rate', 'query_demo_records', 'check_required_fields', 'generate_action_items']);
    for (const spec of registry.specs(registry.list().map((tool) => tool.name))) expect(spec.parameters).toMatchObject({ type: 'object' });
  });
});

describe('check_required_fields', () => {
  it('finds exactly the gaps planted in data/demo/records.json', async () => {
    const result = await builtinRegistry().run('check_required_fields', { required_fields: fields });

    expect(result.success).toBe(true);
    const report = result.result as MissingReport;
    const found = report.missing.map((gap) => `${gap.subject_id}.${gap.field}`);
    expect(found.sort()).toEqual([...plantedGaps].sort());
    expect(found).toEqual(expect.arrayContaining(['S004.consent_date', 'S009.baseline_sbp', 'S009.weight_kg', 'S015.visit2_date', 'S022.baseline_dbp', 'S027.sex']));
    expect(report.records_checked).toBe(demo.records.length);
    expect(report.cells_checked).toBe(demo.records.length * fields.length);
    expect(report.missing_count).toBe(plantedGaps.length);
    expect(report.completion_rate).toBeCloseTo(1 - plantedGaps.length / (demo.records.length * fields.length), 4);
  });

  it('checks only the named fields and subjects', async () => {
    const result = await builtinRegistry().run('check_required_fields', { required_fields: ['consent_date', 'sex'], subject_ids: ['S004', 'S005', 'S027'] });

    const report = result.result as MissingReport;
    expect(report.records_checked).toBe(3);
    expect(report.missing.map((gap) => [gap.subject_id, gap.field])).toEqual([
      ['S004', 'consent_date'],
      ['S027', 'sex'],
    ]);
  });

  it('fails on an unknown field or an empty field list instead of reporting everything complete', async () => {
    const registry = builtinRegistry();

    const unknown = await registry.run('check_required_fields', { required_fields: ['consent_date', 'bmi'] });
    expect(unknown.success).toBe(false);
    expect(unknown.error).toMatch(/unknown field\(s\) bmi/);

    const empty = await registry.run('check_required_fields', { required_fields: [] });
    expect(empty.success).toBe(false);
    expect(empty.error).toContain('required_fields: name at least one field to check');
  });
});

describe('calculate_rate', () => {
  it('computes the fraction and percentage', async () => {
    const result = await builtinRegistry().run('calculate_rate', { numerator: 24, denominator: 30, label: 'visit 2 completion' });

    expect(result).toMatchObject({ success: true, result: { label: 'visit 2 completion', numerator: 24, denominator: 30, rate: 0.8, percentage: '80.0%' } });
  });

  it('fails with the schema message for a zero denominator', async () => {
    const result = await builtinRegistry().run('calculate_rate', { numerator: 0, denominator: 0 });

    expect(result.success).toBe(false);
    expect(result.result).toBeNull();
    expect(result.error).toContain('denominator: must be greater than 0: a rate over zero items is undefined');
  });

  it('fails when the numerator is larger than the denominator', async () => {
    const result = await builtinRegistry().run('calculate_rate', '{"numerator": 31, "denominator": 30}');

    expect(result.success).toBe(false);
    expect(result.error).toMatch(/numerator \(31\) is larger than denominator \(30\)/);
  });
});

describe('query_demo_records', () => {
  it('filters by site', async () => {
    const expected = demo.records.filter((record) => String(record.site).startsWith('SITE-02')).map((record) => record.subject_id);

    const result = await builtinRegistry().run('query_demo_records', { site: 'SITE-02', limit: 500 });

    const answer = result.result as { total: number; returned: number; records: Array<Record<string, unknown>> };
    expect(result.success).toBe(true);
    expect(expected.length).toBeGreaterThan(0);
    expect(answer.total).toBe(expected.length);
    expect(answer.records.map((record) => record.subject_id)).toEqual(expected);
  });

  it('filters by subject and returns only the chosen fields', async () => {
    const result = await builtinRegistry().run('query_demo_records', { subject_ids: ['S009', 'S004'], fields: ['baseline_sbp', 'consent_date'] });

    expect(result.result).toMatchObject({
      study: demo.study,
      total: 2,
      returned: 2,
      records: [
        { subject_id: 'S004', baseline_sbp: subject('S004').baseline_sbp, consent_date: null },
        { subject_id: 'S009', baseline_sbp: null, consent_date: subject('S009').consent_date },
      ],
    });
    for (const record of (result.result as { records: object[] }).records) expect(Object.keys(record).sort()).toEqual(['baseline_sbp', 'consent_date', 'subject_id']);
  });

  it('caps the number of records returned at the limit but reports the total', async () => {
    const result = await builtinRegistry().run('query_demo_records', { limit: 5 });

    expect(result.result).toMatchObject({ total: demo.records.length, returned: 5 });
  });

  it('rejects an unknown field, naming the fields that exist', async () => {
    const result = await builtinRegistry().run('query_demo_records', { fields: ['bmi'] });

    expect(result.success).toBe(false);
    expect(result.error).toMatch(/unknown field\(s\) bmi; known fields: subject_id, site/);
  });
});

describe('generate_action_items', () => {
  it('gives consent and adverse-event issues high priority and other gaps normal priority', async () => {
    const result = await builtinRegistry().run('generate_action_items', {
      issues: [
        { subject_id: 'S004', field: 'consent_date', problem: 'missing', site: 'SITE-01' },
        { subject_id: 'S015', field: 'visit2_date', problem: 'missing' },
        { subject_id: 'S010', problem: '知情同意书版本错误' },
        { subject_id: 'S002', field: 'adverse_event', problem: 'headache not followed up' },
      ],
    });

    expect(result.success).toBe(true);
    const items = (result.result as { items: Array<{ id: string; subject_id: string; priority: string; due_in_days: number; owner: string; action: string }> }).items;
    expect(items.map((item) => [item.id, item.subject_id, item.priority])).toEqual([
      ['AI-001', 'S004', 'high'],
      ['AI-002', 'S015', 'normal'],
      ['AI-003', 'S010', 'high'],
      ['AI-004', 'S002', 'high'],
    ]);
    expect(items[0]).toMatchObject({ owner: 'research coordinator', due_in_days: 2, action: 'Subject S004: resolve "consent_date" — missing' });
    expect(items[1]?.due_in_days).toBeGreaterThan(items[0]!.due_in_days);
  });

  it('rejects an empty issue list', async () => {
    const result = await builtinRegistry().run('generate_action_items', { issues: [] });

    expect(result.success).toBe(false);
    expect(result.error).toMatch(/^issues: /m);
  });
});
