/**
 * The reply as the turn view shows it. The server marks what it did not record ("⚠ Not calculated: ...") in the
 * reply itself, for any client, and lists the same notes in `issues`; the console shows the issues as a warning
 * under the reply, so the marked lines are not shown a second time in its text.
 */
export function replyWithoutIssueNotes(message: string, issues: readonly string[]): string {
  const notes = new Set(issues.map((issue) => `⚠ ${issue}`));
  return message
    .split('\n\n')
    .filter((paragraph) => !notes.has(paragraph.trim()))
    .join('\n\n')
    .trimEnd();
}
