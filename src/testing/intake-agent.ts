/**
 * The test agent of the durable-run tests, a few lines of definition: it asks the patient one question, waits for
 * the answer (a JSON decision in `wait_on`), then advises. It has no tools, so it lists no tool action.
 */
export const INTAKE_SCENARIO = `
id: test-intake
name: Intake test agent
system_prompt: Ask the patient how long the symptom has lasted, then advise.
output_type: text
decision: { mode: json, actions: [ask, respond], wait_on: { ask: answer } }
`;
export const INTAKE_QUESTION = 'How long has the cough lasted?';
export const INTAKE_ADVICE = 'Three weeks of cough: see your doctor this week.';
/** What the scripted model answers on the first turn (the question) and after the answer (the advice). */
export const INTAKE_ASK = JSON.stringify({ action: 'ask', question: INTAKE_QUESTION });
export const INTAKE_RESPOND = JSON.stringify({ action: 'respond', answer: INTAKE_ADVICE });
