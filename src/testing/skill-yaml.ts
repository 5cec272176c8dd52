/**
 * A skill of one hard_rule node for tests: its rules (each a YAML flow mapping), passing to end_ok and failing to
 * end_flagged, or with `review` to a human_review node that a data manager decides on.
 */
export function hardRuleSkillYaml(id: string, rules: string[], review = false): string {
  return `
id: ${id}
name: ${id}
start_node: hard
nodes:
  hard:
    type: hard_rule
    rules:
${rules.map((r) => `      - ${r}`).join('\n')}
    on_pass: end_ok
    on_fail: ${review ? 'review' : 'end_flagged'}
${review ? `  review:
    type: human_review
    description: A data manager confirms the finding before the query goes to the site.
    on_approve: end_confirmed
    on_reject: end_rejected
` : ''}`;
}
