import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { packageRoot } from '../../core/paths.js';
import { parseArmsCsv, parseArmsText } from './parse-arms.js';

const readTrialTestFile = (name: string) => readFileSync(path.join(packageRoot(), 'test-data', 'trial', name), 'utf8');

describe('parseArmsCsv', () => {
  it("reads REDCap's arm.csv (arm_num,name)", () => {
    expect(parseArmsCsv(readTrialTestFile('redcap14-arms.csv'))).toEqual([
      { armNum: 1, name: 'Drug 药物组' },
      { armNum: 2, name: 'Placebo 安慰剂组' },
    ]);
  });

  it('reads the arm_name spelling some REDCap 14 exports use', () => {
    expect(parseArmsCsv('arm_num,arm_name\r\n1,Arm 1\r\n')).toEqual([{ armNum: 1, name: 'Arm 1' }]);
  });

  it('reports missing columns, bad and duplicate numbers and empty names with their lines', () => {
    expect(parseArmsText('arm,label\n1,A\n').problems.map((problem) => [problem.line, problem.field])).toEqual([
      [1, 'arm_num'],
      [1, 'name'],
    ]);
    const { problems } = parseArmsText('arm_num,name\n1,Drug\n0,Zero\n1,Again\n3,\n');
    expect(problems.map((problem) => `${problem.line} ${problem.field}: ${problem.problem}`)).toEqual([
      '3 arm_num: "0" is not an arm number (1, 2, ...)',
      '4 arm_num: arm 1 is already defined on line 2; arm numbers must be unique',
      '5 name: the arm name is empty; give each arm its name, e.g. "Treatment"',
    ]);
  });
});
