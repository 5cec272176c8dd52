import { describe, expect, it } from 'vitest';
import { fileLink } from './file-link';

const file = (url: string) => ({ id: 'file-1', type: 'image', url, belongsTo: 'assistant' });

describe('fileLink', () => {
  it('links an http(s) file by its name, without the signature of its query', () => {
    expect(fileLink(file('https://dify.example.org/files/tools/chart.png?sign=abc'))).toEqual({ href: 'https://dify.example.org/files/tools/chart.png?sign=abc', label: 'chart.png' });
    expect(fileLink(file('http://dify.local/files/report%20v2.pdf'))).toEqual({ href: 'http://dify.local/files/report%20v2.pdf', label: 'report v2.pdf' });
    expect(fileLink(file('https://dify.example.org/'))!.label).toBe('file-1');
  });

  it('never makes a script, data or relative URL a link, however it is written', () => {
    for (const url of ['javascript:alert(1)', ' JavaScript:alert(1)', 'java\tscript:alert(1)', 'data:text/html,<script>alert(1)</script>', 'vbscript:x', '/files/x.png', '//evil.example/x', '']) {
      expect(fileLink(file(url)), url).toBeNull();
    }
  });
});
