import { describe, expect, it } from 'vitest';
import { visibleStreamText } from './stream-text';

describe('visibleStreamText', () => {
  it('shows plain text as it arrives', () => {
    expect(visibleStreamText('The population is adults')).toBe('The population is adults');
    expect(visibleStreamText('a < b, and <b>bold</b>')).toBe('a < b, and <b>bold</b>');
  });

  it('hides the extracted data block and everything after its opening tag', () => {
    expect(visibleStreamText('Noted.\n<extracted_data>{"question": "x"}')).toBe('Noted.');
    expect(visibleStreamText('Noted.\n<extracted_data>{"question": "x"}</extracted_data>')).toBe('Noted.');
  });

  it('hides an opening tag cut off at the end of what has arrived', () => {
    expect(visibleStreamText('Noted.\n<extr')).toBe('Noted.');
    expect(visibleStreamText('Noted.\n<')).toBe('Noted.');
    expect(visibleStreamText('Noted.\n<extracted_data')).toBe('Noted.');
  });
});
