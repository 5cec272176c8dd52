/**
 * The skill of the crash tests (crash-recovery.test.ts and the chaos test): hard rules first (queries from the
 * data, written in a batch), then a soft rule (one model call per record, so a kill lands mid-node), then a
 * person's review. The records these tests seed break the hard rules by construction: every 10th too old
 * (age-range), every 25th consented late (consent-first), every 40th without a weight (weight-required).
 */
export function crashCheckSkill(skill: { id: string; name: string; instruction: string }): string {
  return `
id: ${skill.id}
name: ${skill.name}
start_node: hard
nodes:
  hard:
    type: hard_rule
    rules:
      - { id: age-range, field: age, logic: { and: [{ ">=": [{ var: age }, 18] }, { "<=": [{ var: age }, 75] }] }, message: "Age must be 18-75" }
      - { id: consent-first, field: consent_date, logic: { date_on_or_before: [{ var: consent_date }, { var: enrollment_date }] }, message: "Consent after enrolment" }
      - { id: weight-required, field: weight_kg, logic: { "!": { missing: [weight_kg] } }, message: "Weight is required", severity: warning }
    on_pass: soft
    on_fail: dm_review
  soft:
    type: soft_instruction
    instruction: ${skill.instruction}
    field: ae_text
    on_pass: end_ok
    on_fail: dm_review
  dm_review:
    type: human_review
    description: A data manager confirms the violations before queries go to the site.
    on_approve: end_confirmed
    on_reject: end_rejected
`;
}
