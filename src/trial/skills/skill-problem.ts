/**
 * One thing wrong with a skill, as the editor shows it: where (`nodes.checks.rules[2].logic.and[0]`, or `line 4`
 * for YAML that cannot be read), what, and for a misspelt name the closest known one (`word` is the name as
 * written, so the editor can replace it with `suggestion`).
 */
export interface SkillProblem {
  path: string;
  message: string;
  suggestion?: string;
  word?: string;
}

/** `path: reason` lines (the definition loader's problems) as problems; a line without a path is about the whole skill. */
export function problemsFromLines(lines: readonly string[]): SkillProblem[] {
  return lines.map((line) => {
    const match = /^([\w.[\]"-]+): ([\s\S]*)$/.exec(line);
    return match ? { path: match[1]!, message: match[2]! } : { path: '(skill)', message: line };
  });
}
