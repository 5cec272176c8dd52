import { describe, expect, it } from 'vitest';
import { problemSpan, problemSpans } from './problem-lines';

const SKILL = `id: weight-checks
start_node: checks
nodes:
  checks:
    type: hard_rule
    rules:
      - id: weight-min
        field: v1_arm_1.weight_kg
        logic: { ">=": [{ var: v1_arm_1.weight_kg }, 30] }
      - id: weight-max
        field: v1_arm_1.weight_kg
        logic: { "<=": [{ var: v1_arm_1.weigth_kg }, 200] }
`;

describe('problemSpan', () => {
  it('puts a YAML error the server names by line and column on that line', () => {
    const span = problemSpan(SKILL, 'line 9, column 9');
    expect(span?.line).toBe(9);
    expect(SKILL.slice(span!.from, span!.to)).toBe('logic: { ">=": [{ var: v1_arm_1.weight_kg }, 30] }');
  });

  it('walks a path into the YAML to the line of the node it names', () => {
    const span = problemSpan(SKILL, 'nodes.checks.rules[1].logic.<=[0].var');
    expect(span?.line).toBe(12);
    expect(SKILL.slice(span!.from, span!.to)).toBe('var: v1_arm_1.weigth_kg');
    expect(problemSpan(SKILL, 'nodes.checks.rules[1]')?.line).toBe(10);
    expect(problemSpan(SKILL, 'start_node')?.line).toBe(2);
  });

  it('stops at the deepest node the text has, and gives no line for the whole skill', () => {
    expect(problemSpan(SKILL, 'nodes.checks.on_fail')?.line).toBe(4);
    expect(problemSpan(SKILL, '(skill)')).toBeNull();
    expect(problemSpan('a: [', 'a')).toBeNull();
  });

  it('keeps a line past the end of the text on the last line', () => {
    expect(problemSpan('a: 1', 'line 7, column 1')?.line).toBe(1);
  });

  it('places every problem of a validation in one reading of the text, in the order given', () => {
    const paths = ['nodes.checks.rules[1].logic.<=[0].var', '(skill)', 'line 9, column 9', 'start_node'];
    expect(problemSpans(SKILL, paths)).toEqual(paths.map((path) => problemSpan(SKILL, path)));
    expect(problemSpans(SKILL, paths).map((span) => span?.line ?? null)).toEqual([12, null, 9, 2]);
    // Text too broken to walk still has its lines and columns.
    expect(problemSpans('a: [', ['a', 'line 1, column 4']).map((span) => span?.line ?? null)).toEqual([null, 1]);
  });
});
