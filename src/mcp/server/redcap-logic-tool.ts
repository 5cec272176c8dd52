import { z } from 'zod';
import { compileRedcapLogic, MAX_LOGIC_LENGTH } from '../../trial/rules/redcap-logic/index.js';
import type { McpTool } from './mcp-tool.js';

const LOGIC_ARGUMENTS = z.strictObject({ logic: z.string().min(1, 'send the REDCap logic, e.g. "[age] < 18"').max(MAX_LOGIC_LENGTH) });

/** REDCap logic to JSON Logic with the compiler QC skills use (imported Data Quality rules, branching logic): no data read. */
export function redcapLogicTool(): McpTool<{ logic: string }> {
  return {
    name: 'compile_redcap_logic',
    description:
      'Compile REDCap logic (branching logic or a Data Quality rule, e.g. "[age] < 18 and [consent] = \'1\'") to JSON Logic as ClinAgent\'s rule engine runs it. The result is true where the REDCap logic is true; a Data Quality rule describes a discrepancy, so as a QC hard rule it is {"!": <jsonLogic>}. An unsupported function or a syntax error is named with where it is.',
    schema: LOGIC_ARGUMENTS,
    run: ({ logic }) => {
      const jsonLogic = compileRedcapLogic(logic);
      return { jsonLogic, asHardRule: { '!': jsonLogic } };
    },
  };
}
