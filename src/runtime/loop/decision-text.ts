/**
 * What a JSON decision says to a person. Decisions carry their text in a field whose name the agent's prompt chose
 * (`{"action": "respond", "response": "..."}`, `{"action": "ask", "question": "..."}`); a native answer is the text
 * itself. One reading for every caller, so a durable run and a streamed run show a person the same words.
 */
const ANSWER_FIELDS = ['answer', 'response', 'message', 'text'] as const;
const PROMPT_FIELDS = ['question', 'prompt', 'response', 'message', 'text'] as const;

function firstText(data: Record<string, unknown> | undefined, fields: readonly string[]): string | undefined {
  for (const key of fields) {
    const value = data?.[key];
    if (typeof value === 'string' && value.trim()) return value;
  }
  return undefined;
}

/** The answer a final decision gives, or the model's text when it has no text field. */
export function decisionAnswer(content: string, data: Record<string, unknown> | undefined): string {
  return firstText(data, ANSWER_FIELDS) ?? content;
}

/** What a decision that waits for a person asks them. */
export function waitingPrompt(content: string, data: Record<string, unknown> | undefined): string {
  return firstText(data, PROMPT_FIELDS) ?? content;
}
