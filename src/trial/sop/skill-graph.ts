import type { SopNode } from './skill-schema.js';

const isEndNode = (id: string): boolean => id.startsWith('end');

function targetsOf(node: SopNode): Array<[string, string]> {
  switch (node.type) {
    case 'hard_rule':
    case 'soft_instruction':
      return [['on_pass', node.on_pass], ['on_fail', node.on_fail], ...(node.on_error ? ([['on_error', node.on_error]] as Array<[string, string]>) : [])];
    case 'human_review':
      return [['on_approve', node.on_approve], ['on_reject', node.on_reject]];
  }
}

/**
 * Graph problems of a skill: targets that name no node, and nodes from which no end node can be reached
 * (a cycle without exit would keep a run busy forever). Cycles that can still reach an end are allowed:
 * "re-check after review" loops are real SOPs.
 */
export function graphProblems(startNode: string, nodes: Record<string, SopNode>): string[] {
  const problems: string[] = [];
  if (!nodes[startNode] && !isEndNode(startNode)) problems.push(`start_node: "${startNode}" is not a node (nodes: ${Object.keys(nodes).join(', ')})`);
  for (const [id, node] of Object.entries(nodes)) {
    if (isEndNode(id)) problems.push(`nodes.${id}: ids starting with "end" are terminal states and cannot be nodes; rename it`);
    for (const [key, to] of targetsOf(node)) {
      if (!isEndNode(to) && !nodes[to]) problems.push(`nodes.${id}.${key}: "${to}" is neither a node nor an end state (end_...)`);
    }
  }
  // Nodes that can reach an end, found backwards from the ends.
  const canFinish = new Set<string>();
  let changed = true;
  while (changed) {
    changed = false;
    for (const [id, node] of Object.entries(nodes)) {
      if (canFinish.has(id)) continue;
      if (targetsOf(node).some(([, to]) => isEndNode(to) || canFinish.has(to))) {
        canFinish.add(id);
        changed = true;
      }
    }
  }
  for (const id of Object.keys(nodes)) {
    if (!canFinish.has(id)) problems.push(`nodes.${id}: can never reach an end state (a cycle without exit); point one of its targets at an end_... state`);
  }
  return problems;
}
