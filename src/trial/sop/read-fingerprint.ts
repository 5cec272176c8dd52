import { createHash } from 'node:crypto';
import type { HardRule } from '../rules/index.js';
import { fieldValue } from '../rules/run-rules.js';
import { logicReads } from '../skills/rule-reads.js';
import { stableJson } from '../store/stable-json.js';

/**
 * What a finding was about: every value its rule read. A finding a person decided (closed as verified against
 * source, withdrawn by a rejected review) is not raised again while this stays the same, as REDCap Data Quality
 * keeps an excluded result excluded and an EDC keeps a closed discrepancy closed; once one of the values changes,
 * the finding is about other data and is raised again. `fields` null: the rule read the whole record.
 *
 * A hash, so the query row holds no copy of the values (and it never leaves the server: see withTransitions).
 */
export function readFingerprint(fields: readonly string[] | null, data: Record<string, unknown>): string {
  const read = fields === null ? data : [...new Set(fields)].sort().map((field) => [field, fieldValue(data, field) ?? null]);
  return createHash('sha256').update(stableJson(read)).digest('hex');
}

/**
 * What a soft rule read: the whole record as the model saw it (record-context.ts modelView), whatever field its
 * query is raised on, hashed likewise. A change anywhere in it is other data for the model to judge.
 */
export function viewFingerprint(view: unknown): string {
  return createHash('sha256').update(stableJson(view)).digest('hex');
}

/** Per compiled rule, which never changes once loaded. */
const readsOf = new WeakMap<object, string[] | null>();
/** An event read whole is read as a field holding the visit, so events need not be told apart here. */
const AS_FIELDS = { isEvent: () => false };

/**
 * The fields a hard rule reads: the one it reports and every one its logic names; null when the logic reads the
 * whole record or a name worked out at run time, so every value counts. Read as the identifier guard reads rules
 * (skills/rule-reads.ts), erring on reading more: a read left out would keep a decided finding closed after the
 * value it read changed.
 */
export function ruleReads(rule: Pick<HardRule, 'field' | 'logic'>): string[] | null {
  if (readsOf.has(rule)) return readsOf.get(rule)!;
  const reads = rule.logic === undefined ? [] : logicReads(rule.logic, AS_FIELDS);
  const fields = reads.some((read) => read.kind !== 'field') ? null : [rule.field, ...reads.flatMap((read) => (read.segments.length ? [read.segments.join('.')] : []))];
  readsOf.set(rule, fields);
  return fields;
}
