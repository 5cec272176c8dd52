import { describe, expect, it } from 'vitest';
import { graphProblems } from './skill-graph.js';
import type { SopNode } from './skill-schema.js';

const hard = (on_pass: string, on_fail: string): SopNode => ({ type: 'hard_rule', rules: [{ field: 'age', logic: true, message: 'x' }], on_pass, on_fail });
const review = (on_approve: string, on_reject: string): SopNode => ({ type: 'human_review', description: 'check', on_approve, on_reject, on_reject_queries: 'cancel' });

describe('skill graph validation', () => {
  it('accepts a flowchart whose every node can reach an end, loops included', () => {
    expect(graphProblems('a', { a: hard('end_ok', 'r'), r: review('a', 'end_rejected') })).toEqual([]);
  });

  it('names targets that are neither nodes nor end states', () => {
    expect(graphProblems('a', { a: hard('end_ok', 'nowhere') })).toContain('nodes.a.on_fail: "nowhere" is neither a node nor an end state (end_...)');
  });

  it('finds a cycle without exit, naming every trapped node', () => {
    const problems = graphProblems('a', { a: hard('b', 'b'), b: hard('a', 'a'), c: hard('end_ok', 'a') });
    expect(problems).toEqual(expect.arrayContaining([expect.stringMatching(/^nodes\.a: can never reach an end state/), expect.stringMatching(/^nodes\.b: can never reach an end state/)]));
    expect(problems.some((p) => p.startsWith('nodes.c:'))).toBe(false);
  });

  it('requires the start node to exist and refuses nodes named like end states', () => {
    const problems = graphProblems('start', { end_here: hard('end_ok', 'end_ok') });
    expect(problems).toContain('start_node: "start" is not a node (nodes: end_here)');
    expect(problems.some((p) => p.startsWith('nodes.end_here: ids starting with "end"'))).toBe(true);
  });
});
