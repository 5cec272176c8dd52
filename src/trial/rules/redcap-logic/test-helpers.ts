import { compileRules } from '../compile-rules.js';
import { compileRedcapLogic } from './index.js';

interface DataQualityRule {
  /** Whether the rule flags the record; throws when the engine could not evaluate it (an error violation). */
  fires(record: Record<string, unknown>): boolean;
  /** The violation messages, error violations included. */
  messages(record: Record<string, unknown>): string[];
}

/**
 * A REDCap Data Quality rule as a hard rule through the real engine (compileRules): the logic describes a
 * discrepancy, so the hard rule passes when it is false. Records are shaped as QC loads them.
 */
export function dataQualityRule(logic: string): DataQualityRule {
  const message = `REDCap rule: ${logic}`;
  const rules = compileRules([{ id: 'dq', field: 'record_id', logic: { '!': compileRedcapLogic(logic) }, message }]);
  const messages = (record: Record<string, unknown>) => rules.run(record).map((violation) => violation.message);
  return {
    messages,
    fires: (record) => {
      const found = messages(record);
      const failure = found.find((text) => text !== message);
      if (failure) throw new Error(failure);
      return found.length > 0;
    },
  };
}
