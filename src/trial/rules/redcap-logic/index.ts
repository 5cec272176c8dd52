import { ClinAgentError } from '../../../core/errors.js';
import { compileNode } from './compile-node.js';
import { settled, type JsonLogic } from './json-logic.js';
import { parseRedcapLogic } from './parser.js';

export type { JsonLogic } from './json-logic.js';
export { SUPPORTED_FUNCTIONS } from './functions.js';
export { MAX_NESTING_DEPTH } from './parser.js';
export { MAX_LOGIC_LENGTH } from './tokenizer.js';

/**
 * Compiles REDCap logic (Data Quality rules, branching logic) to JSON Logic for `createRuleEngine()`, over a
 * record as QC loads it: the first event's fields at the top level, every event's under its name. The result is
 * true where the REDCap logic is true; a Data Quality rule describes a discrepancy, so as a hard rule (which
 * passes when its logic is truthy) it is `{"!": compileRedcapLogic(logic)}`. Throws ClinAgentError
 * VALIDATION_FAILED naming the unsupported function, or the character where the syntax goes wrong.
 */
export function compileRedcapLogic(logic: string): JsonLogic {
  if (typeof logic !== 'string') {
    throw new ClinAgentError('VALIDATION_FAILED', `REDCap logic must be text such as "[age] < 18", got ${logic === null ? 'null' : typeof logic}.`, {});
  }
  return settled(compileNode(parseRedcapLogic(logic))).logic;
}
