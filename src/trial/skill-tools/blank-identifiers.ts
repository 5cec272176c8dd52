import type { RecordContext } from '../sop/record-context.js';

type Data = Record<string, unknown>;

/**
 * The record with every identifier value blank (null), at the top level and in each event, as a tool evaluates
 * rules for someone who may not see identifiers. Such a person cannot send a rule that reads one
 * (identifier-rule-access.ts refuses it); this is the second line, so a read that check failed to see evaluates on
 * a blank and its verdict tells nothing. Built without prototypes, as record-context.ts builds records.
 */
export function withIdentifiersBlank(record: RecordContext, isIdentifier: (field: string) => boolean): RecordContext {
  return { ...record, data: blank(record.data, isIdentifier, true), identifierValues: [] };
}

function blank(source: Data, isIdentifier: (field: string) => boolean, descend: boolean): Data {
  const out = Object.create(null) as Data;
  for (const key of Object.keys(source)) {
    const value = source[key];
    if (isIdentifier(key)) out[key] = null;
    // One level down: the events, each an object of fields (record-context.ts).
    else if (descend && value !== null && typeof value === 'object' && !Array.isArray(value)) out[key] = blank(value as Data, isIdentifier, false);
    else out[key] = value;
  }
  return out;
}
