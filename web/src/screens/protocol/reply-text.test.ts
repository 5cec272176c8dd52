import { describe, expect, it } from 'vitest';
import { replyWithoutIssueNotes } from './reply-text';

describe('replyWithoutIssueNotes', () => {
  it('leaves out the marked lines the issues list shows, and keeps the reply', () => {
    const issue = 'Not calculated: "60 per group" was stated without calculate_sample_size, so it is not recorded.';
    expect(replyWithoutIssueNotes(`About 60 per group.\n\n⚠ ${issue}`, [issue])).toBe('About 60 per group.');
  });

  it('keeps a paragraph that only looks like a note, and every line when there are no issues', () => {
    const message = 'Step one.\n\n⚠ Check the units.';
    expect(replyWithoutIssueNotes(message, [])).toBe(message);
    expect(replyWithoutIssueNotes(message, ['Something else.'])).toBe(message);
  });
});
