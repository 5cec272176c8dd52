import { z } from 'zod';
import type { ToolDefinition, ToolRegistry } from '../core/tools/registry.js';
import type { DemoRecord, DemoRecordSet } from './demo-records.js';

/**
 * The four built-in tools of seed 004. They are pure functions over the records they are given: no API
 * keys, no network, no writes, so a model calling them can never cause an unaudited side effect.
 */
const isMissing = (value: unknown) => value === null || value === undefined || (typeof value === 'string' && value.trim() === '');

function selectRecords(records: DemoRecord[], filter: { subject_ids?: string[]; site?: string }): DemoRecord[] {
  return records.filter(
    (r) => (!filter.subject_ids?.length || filter.subject_ids.includes(String(r.subject_id))) && (!filter.site || String(r.site ?? '').includes(filter.site)),
  );
}

export function calculateRateTool(): ToolDefinition<{ numerator: number; denominator: number; label?: string }> {
  return {
    name: 'calculate_rate',
    description: 'Compute a rate (numerator / denominator) as a fraction and a percentage, e.g. a completion or adverse-event rate.',
    schema: z.object({
      numerator: z.number().min(0).describe('count of events or completed items'),
      denominator: z.number().positive('must be greater than 0: a rate over zero items is undefined').describe('total count'),
      label: z.string().optional().describe('what the rate measures'),
    }),
    run: ({ numerator, denominator, label }) => {
      if (numerator > denominator) throw new Error(`numerator (${numerator}) is larger than denominator (${denominator}); check the counts`);
      const rate = numerator / denominator;
      return { label: label ?? 'rate', numerator, denominator, rate: Math.round(rate * 10_000) / 10_000, percentage: `${(rate * 100).toFixed(1)}%` };
    },
  };
}

export function queryDemoRecordsTool(data: DemoRecordSet): ToolDefinition<{ subject_ids?: string[]; site?: string; fields?: string[]; limit: number }> {
  const knownFields = Object.keys(data.records[0] ?? {});
  return {
    name: 'query_demo_records',
    description: `Read records of the demo study ${data.study}. Filter by subject ids or site; choose fields. Fields: ${knownFields.join(', ')}.`,
    schema: z.object({
      subject_ids: z.array(z.string()).optional().describe('e.g. ["S001","S002"]'),
      site: z.string().optional().describe('site code or part of its name, e.g. SITE-01'),
      fields: z.array(z.string()).optional().describe('fields to return; all when absent'),
      limit: z.number().int().min(1).max(500).default(50),
    }),
    run: ({ subject_ids, site, fields, limit }) => {
      const unknown = (fields ?? []).filter((f) => !knownFields.includes(f));
      if (unknown.length) throw new Error(`unknown field(s) ${unknown.join(', ')}; known fields: ${knownFields.join(', ')}`);
      const matched = selectRecords(data.records, { subject_ids, site });
      const records = matched.slice(0, limit).map((r) => (fields?.length ? Object.fromEntries(['subject_id', ...fields].map((f) => [f, r[f] ?? null])) : r));
      return { study: data.study, total: matched.length, returned: records.length, records };
    },
  };
}

export function checkRequiredFieldsTool(data: DemoRecordSet): ToolDefinition<{ required_fields: string[]; subject_ids?: string[]; site?: string }> {
  const knownFields = Object.keys(data.records[0] ?? {});
  return {
    name: 'check_required_fields',
    description: 'Check that required fields are filled in the demo records; returns the completion rate and every missing (subject, field).',
    schema: z.object({
      required_fields: z.array(z.string()).min(1, 'name at least one field to check'),
      subject_ids: z.array(z.string()).optional(),
      site: z.string().optional(),
    }),
    run: ({ required_fields, subject_ids, site }) => {
      const unknown = required_fields.filter((f) => !knownFields.includes(f));
      if (unknown.length) throw new Error(`unknown field(s) ${unknown.join(', ')}; known fields: ${knownFields.join(', ')}`);
      const records = selectRecords(data.records, { subject_ids, site });
      const missing = records.flatMap((r) => required_fields.filter((f) => isMissing(r[f])).map((field) => ({ subject_id: String(r.subject_id), site: r.site, field })));
      const cells = records.length * required_fields.length;
      return {
        records_checked: records.length,
        fields_checked: required_fields,
        cells_checked: cells,
        missing_count: missing.length,
        completion_rate: cells === 0 ? null : Math.round(((cells - missing.length) / cells) * 10_000) / 10_000,
        missing,
      };
    },
  };
}

export function generateActionItemsTool(): ToolDefinition<{ issues: Array<{ subject_id?: string; field?: string; problem: string; site?: string }>; owner: string }> {
  return {
    name: 'generate_action_items',
    description: 'Turn data issues into follow-up action items for site staff (one per issue, with priority and due days). Does not send anything.',
    schema: z.object({
      issues: z.array(z.object({ subject_id: z.string().optional(), field: z.string().optional(), problem: z.string().min(1), site: z.string().optional() })).min(1),
      owner: z.string().default('research coordinator'),
    }),
    run: ({ issues, owner }) => ({
      items: issues.map((issue, i) => {
        // Consent and safety gaps are regulatory findings (GCP): they outrank ordinary missing data.
        const urgent = /consent|adverse|知情|不良/i.test(`${issue.field ?? ''} ${issue.problem}`);
        return {
          id: `AI-${String(i + 1).padStart(3, '0')}`,
          subject_id: issue.subject_id ?? null,
          site: issue.site ?? null,
          action: `${issue.subject_id ? `Subject ${issue.subject_id}: ` : ''}${issue.field ? `resolve "${issue.field}" — ` : ''}${issue.problem}`,
          owner,
          priority: urgent ? 'high' : 'normal',
          due_in_days: urgent ? 2 : 7,
        };
      }),
    }),
  };
}

export function registerBuiltinTools(registry: ToolRegistry, data: DemoRecordSet): void {
  registry.register(calculateRateTool());
  registry.register(queryDemoRecordsTool(data));
  registry.register(checkRequiredFieldsTool(data));
  registry.register(generateActionItemsTool());
}
