import { describe, expect, it } from 'vitest';
import { elementPath, formatOdmProblem, odmInvalid, type OdmProblem } from './odm-problems.js';

const problem = (index: number): OdmProblem => ({
  source: 'study.xml',
  line: 100 + index,
  element: `${elementPath('ItemData', 'ItemOID', 'I.AGE')} in ${elementPath('SubjectData', 'SubjectKey', `S${index}`)}`,
  field: 'age',
  value: 'abc',
  problem: '"abc" is not an integer',
});

describe('ODM import problems', () => {
  it('names the XML line, the element and the field of each problem', () => {
    expect(formatOdmProblem(problem(1))).toBe('study.xml line 101, ItemData[@ItemOID="I.AGE"] in SubjectData[@SubjectKey="S1"], field age: "abc" is not an integer');
    expect(elementPath('StudyEventDef', 'OID', 'SE "1"')).toBe('StudyEventDef[@OID="SE \\"1\\""]');
  });

  it('raises IMPORT_INVALID listing the first problems with their elements, and counts the rest', () => {
    const error = odmInvalid(Array.from({ length: 60 }, (_, index) => problem(index)));
    expect(error.code).toBe('IMPORT_INVALID');
    const lines = error.message.split('\n');
    expect(lines[0]).toBe('study.xml: 60 problems; nothing was imported. Fix each element below (in the EDC or in the file) and import the file again.');
    expect(lines[1]).toBe('study.xml line 100, ItemData[@ItemOID="I.AGE"] in SubjectData[@SubjectKey="S0"], field age: "abc" is not an integer');
    expect(lines.at(-1)).toBe('... and 40 more (details.problems lists the first 50)');
    expect(error.details).toMatchObject({ problemCount: 60, moreProblems: 10 });
    expect((error.details as { problems: OdmProblem[] }).problems[49]!.element).toBe('ItemData[@ItemOID="I.AGE"] in SubjectData[@SubjectKey="S49"]');
  });
});
