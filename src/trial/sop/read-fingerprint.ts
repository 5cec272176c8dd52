import { createHash } from 'node:crypto';
import { createRuleEngine, logicFieldReferences, type HardRule, type RuleEngine } from '../rules/index.js';
import { fieldValue } from '../rules/run-rules.js';
import { stableJson } from '../store/stable-json.js';

/**
 * What a finding was about: every value its rule read. A finding a person decided (closed as verified against
 * source, withdrawn by a rejected review) is not raised again while this stays the same, as REDCap Data Quality
 * keeps an excluded result excluded and an EDC keeps a closed discrepancy closed; once one of the values changes,
 * the finding is about other data and is raised again.
 *
 * A hash, so the query row holds no copy of the values (and it never leaves the server: see withTransitions).
 */
export function readFingerprint(fields: readonly string[], data: Record<string, unknown>): string {
  const read = [...new Set(fields)].sort().map((field) => [field, fieldValue(data, field) ?? null]);
  return createHash('sha256').update(stableJson(read)).digest('hex');
}

/**
 * What a soft rule read: the whole record as the model saw it (record-context.ts modelView), whatever field its
 * query is raised on, hashed likewise. A change anywhere in it is other data for the model to judge.
 */
export function viewFingerprint(view: unknown): string {
  return createHash('sha256').update(stableJson(view)).digest('hex');
}

let engine: RuleEngine | undefined;
/** Per compiled rule, which never changes once loaded. */
const readsOf = new WeakMap<object, string[]>();

/** The fields a hard rule reads: the one it reports and every one its logic names (computed names left out). */
export function ruleReads(rule: Pick<HardRule, 'field' | 'logic'>): string[] {
  let reads = readsOf.get(rule);
  if (!reads) {
    engine ??= createRuleEngine();
    reads = [rule.field, ...(rule.logic === undefined ? [] : logicFieldReferences(rule.logic, engine).map((reference) => reference.name))];
    readsOf.set(rule, reads);
  }
  return reads;
}
