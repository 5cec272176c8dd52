import type { TrialArm } from '../store/types.js';
import { readCsvTable, type Table } from './csv-table.js';
import { quote, valueOrThrow, type ImportProblem, type Parsed } from './problems.js';

/**
 * REDCap's arms: `arm.csv` from Define My Events and the API's content=arm both have arm_num and name;
 * some REDCap 14 exports write the second column as arm_name. Other columns are ignored.
 */
const NAME_COLUMNS = ['name', 'arm_name'] as const;
const ARM_NUMBER = /^\d+$/;

export function parseArmsCsv(text: string, source = 'arms.csv'): TrialArm[] {
  return valueOrThrow(parseArmsText(text, source));
}

export function parseArmsText(text: string, source = 'arms.csv'): Parsed<TrialArm[]> {
  const table = readCsvTable(text, source);
  if (table.value.header.length === 0) return { value: [], problems: table.problems };
  const parsed = parseArmsTable(table.value);
  return { value: parsed.value, problems: [...table.problems, ...parsed.problems] };
}

export function parseArmsTable(table: Table): Parsed<TrialArm[]> {
  const { source } = table;
  const problems: ImportProblem[] = [];
  const nameColumn = NAME_COLUMNS.find((column) => table.header.includes(column));
  const missing = [...(table.header.includes('arm_num') ? [] : ['arm_num']), ...(nameColumn ? [] : ['name'])];
  if (missing.length > 0) {
    for (const column of missing) {
      problems.push({ source, line: 1, field: column, value: '', problem: `the column "${column}" is missing; the header must be arm_num,name as REDCap exports arms (Project Setup > Define My Events > Download arms)` });
    }
    return { value: [], problems };
  }

  const arms: TrialArm[] = [];
  const lineOfArm = new Map<number, number>();
  for (const row of table.rows) {
    const report = (field: string, value: string, problem: string) => problems.push({ source, line: row.line, field, value, problem });
    const before = problems.length;
    const numberText = (row.values.arm_num ?? '').trim();
    const name = (row.values[nameColumn!] ?? '').trim();
    const armNum = Number(numberText);
    if (!numberText) report('arm_num', '', 'the arm number is empty; REDCap numbers arms from 1');
    else if (!ARM_NUMBER.test(numberText) || armNum < 1) report('arm_num', numberText, `${quote(numberText)} is not an arm number (1, 2, ...)`);
    else if (lineOfArm.has(armNum)) report('arm_num', numberText, `arm ${armNum} is already defined on line ${lineOfArm.get(armNum)}; arm numbers must be unique`);
    else lineOfArm.set(armNum, row.line);
    if (!name) report(nameColumn!, '', 'the arm name is empty; give each arm its name, e.g. "Treatment"');
    if (problems.length > before) continue;
    arms.push({ armNum, name });
  }
  if (table.rows.length === 0) problems.push({ source, line: 2, field: '(file)', value: '', problem: 'the arms file has a header but no arms; leave it out instead, or export it again' });
  return { value: arms, problems };
}
