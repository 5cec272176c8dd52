/**
 * Replaces every whole-word occurrence of `word` (a field or event name as written) with `replacement`. Names are
 * letters, digits and `_`, so `wieght` in `v2_arm_1.wieght` is replaced but `wieght_kg` is left alone.
 */
export function replaceWord(text: string, word: string, replacement: string): string {
  if (!word) return text;
  const escaped = word.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return text.replace(new RegExp(`(?<![A-Za-z0-9_])${escaped}(?![A-Za-z0-9_])`, 'g'), replacement);
}

/** The YAML a new skill starts from: one rule for this trial, to be changed. */
export function newSkillTemplate(projectId: string): string {
  return `# A new QC skill for ${projectId}: change the id, the rules and the messages.
id: new-checks
name: New checks
projects: [${projectId}]
start_node: checks
nodes:
  checks:
    type: hard_rule
    rules:
      - id: age-adult
        field: age
        logic: { ">=": [{ var: age }, 18] }
        message: "Age must be 18 or over"
        severity: error
    on_pass: end_ok
    on_fail: end_flagged
`;
}
