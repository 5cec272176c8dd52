import { describe, expect, it } from 'vitest';
import { replyBlocks } from './reply-blocks';

describe('replyBlocks', () => {
  it('sets the risk advice that leads a reply apart from the model\'s words', () => {
    expect(replyBlocks('⚠️ 请立即就医：马上去医院急诊。\n\nDoes it itch?')).toEqual([
      { kind: 'warning', text: '⚠️ 请立即就医：马上去医院急诊。' },
      { kind: 'text', text: 'Does it itch?' },
    ]);
  });

  it('sets apart a warning that replaced a sentence inside a paragraph', () => {
    const reply = 'Azelaic acid cream is an option in pregnancy. ⚠️ A medicine in this answer is not suitable for you (avoid in pregnancy) and was taken out.';
    expect(replyBlocks(reply)).toEqual([
      { kind: 'text', text: 'Azelaic acid cream is an option in pregnancy.' },
      { kind: 'warning', text: '⚠️ A medicine in this answer is not suitable for you (avoid in pregnancy) and was taken out.' },
    ]);
  });

  it('keeps a reply without warnings as its paragraphs', () => {
    expect(replyBlocks('Where is it?\n\nDoes it itch?')).toEqual([
      { kind: 'text', text: 'Where is it?' },
      { kind: 'text', text: 'Does it itch?' },
    ]);
    expect(replyBlocks('')).toEqual([]);
  });
});
