import type ExcelJS from 'exceljs';
import { LOW_YIELD, type RuleYield } from './rule-yield.js';

const COLUMNS: Array<[Exclude<keyof RuleYield, 'lowYield'>, string]> = [
  ['skillId', 'Skill'], ['ruleId', 'Rule'], ['field', 'Field'], ['raised', 'Raised'], ['open', 'Open'], ['held', 'Held'], ['answered', 'Answered'],
  ['closedWithChange', 'Closed, data changed'], ['closedNoChange', 'Closed, no change'], ['closedNoLongerFires', 'Closed, no longer fires'], ['cancelled', 'Cancelled'], ['yield', 'Yield'],
];

/**
 * The "Rule yield" sheet: one row per skill, rule and field with what its queries came to, the yield as a percentage
 * cell (empty while none is closed), and the rules worth moving to central review marked. Identifiers, rule and field
 * names are written as text cells, never formulas (see export.ts).
 */
export function addRuleYieldSheet(workbook: ExcelJS.Workbook, rules: readonly RuleYield[]): void {
  const sheet = workbook.addWorksheet('Rule yield');
  sheet.columns = [...COLUMNS.map(([key, header]) => ({ header, key, width: key === 'ruleId' || key === 'field' ? 28 : 14 })), { header: 'Central review?', key: 'lowYield', width: 60 }];
  const hint = `consider central review: under ${LOW_YIELD.maxYield * 100}% of at least ${LOW_YIELD.minClosed} closed queries changed data`;
  for (const rule of rules) sheet.addRow({ ...rule, yield: rule.yield ?? '', lowYield: rule.lowYield ? hint : '' });
  sheet.getColumn('yield').numFmt = '0%';
  sheet.getRow(1).font = { bold: true };
  sheet.views = [{ state: 'frozen', ySplit: 1 }];
}
