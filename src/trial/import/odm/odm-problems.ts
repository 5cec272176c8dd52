import { ClinAgentError } from '../../../core/errors.js';
import { listProblems, type ImportProblem } from '../problems.js';

/**
 * An import problem in an ODM file: the shape every import reports, with `line` the XML line of the element
 * and `element` the element as a data manager finds it in the file or in the sending EDC, e.g.
 * `ItemData[@ItemOID="I.AGE"] in SubjectData[@SubjectKey="S1"]/StudyEventData[@StudyEventOID="SE.BASELINE"]`.
 */
export interface OdmProblem extends ImportProblem {
  element: string;
}

export function formatOdmProblem(problem: ImportProblem): string {
  const element = (problem as Partial<OdmProblem>).element;
  return `${problem.source} line ${problem.line}, ${element ? `${element}, ` : ''}field ${problem.field}: ${problem.problem}`;
}

/** An XPath-like step naming an element by its key attribute, as ODM tools show them. */
export function elementPath(name: string, attribute: string, value: string): string {
  return `${name}[@${attribute}=${JSON.stringify(value)}]`;
}

/** IMPORT_INVALID, as the CSV import raises it, with each problem located by its ODM element. */
export function odmInvalid(problems: ReadonlyArray<OdmProblem>): ClinAgentError {
  const sources = [...new Set(problems.map((problem) => problem.source))].join(', ');
  const { lines, details } = listProblems(problems, formatOdmProblem);
  const noun = problems.length === 1 ? 'problem' : 'problems';
  return new ClinAgentError('IMPORT_INVALID', [`${sources}: ${problems.length} ${noun}; nothing was imported. Fix each element below (in the EDC or in the file) and import the file again.`, ...lines].join('\n'), details);
}
