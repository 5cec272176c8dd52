import { ClinAgentError } from '../../core/errors.js';
import type { HotMemoryLine, HotMemorySection } from '../types.js';
import { cleanText, SECTIONS } from './lines.js';

/** The headings the document is rendered with. */
const SECTION_HEADINGS: Record<HotMemorySection, string> = {
  preferences: 'Preferences',
  state: 'Current state',
  prohibitions: 'Prohibitions',
};

/**
 * Headings the editor accepts, lower-cased. The Chinese ones are the seed document's own words (用户偏好,
 * 当前状态, 系统禁令), since the PIs and CRCs who edit the memory by hand write them.
 */
const HEADING_ALIASES: Record<string, HotMemorySection> = {
  preferences: 'preferences',
  'user preferences': 'preferences',
  偏好: 'preferences',
  用户偏好: 'preferences',
  'current state': 'state',
  state: 'state',
  'project state': 'state',
  当前状态: 'state',
  项目状态: 'state',
  prohibitions: 'prohibitions',
  'system prohibitions': 'prohibitions',
  禁令: 'prohibitions',
  禁止: 'prohibitions',
  系统禁令: 'prohibitions',
};

const ACCEPTED_HEADINGS = ['## Preferences', '## Current state', '## Prohibitions', '## 偏好 / 用户偏好', '## 当前状态 / 项目状态', '## 禁令 / 禁止 / 系统禁令'];

/** `## Preferences` / `## Current state` / `## Prohibitions`, only the sections that have lines, one `- text` each. */
export function renderHotMemory(lines: readonly HotMemoryLine[]): string {
  const blocks: string[] = [];
  for (const section of SECTIONS) {
    const texts = lines.filter((line) => line.section === section).map((line) => `- ${line.text}`);
    if (texts.length) blocks.push(`## ${SECTION_HEADINGS[section]}\n${texts.join('\n')}`);
  }
  return blocks.join('\n\n');
}

const HEADING = /^#{1,6}\s*(.*?)\s*#*\s*$/;
// A marker needs the space after it ("1.5 mg" and "-5%" are text); 、 is how Chinese numbers a list, usually without one.
const BULLET = /^(?:[-*+•](?:\s+|$)|\d{1,3}[.)](?:\s+|$)|\d{1,3}、\s*)(.*)$/;

/**
 * Reads the document as the editor sends it. Every line under a heading is one fact, with or without a list
 * marker; a document the memory cannot hold (an unknown heading, text before any heading) is refused with
 * every problem's line number at once, because guessing a section would file a prohibition as a preference.
 */
export function parseHotMemoryMarkdown(content: string): Array<{ section: HotMemorySection; text: string }> {
  const parsed: Array<{ section: HotMemorySection; text: string }> = [];
  const problems: string[] = [];
  // 'none' before the first heading, 'unknown' under a heading already reported: their lines are reported once.
  let section: HotMemorySection | 'none' | 'unknown' = 'none';
  let reportedUnheaded = false;
  content.split(/\r\n|\r|\n/).forEach((raw, index) => {
    const line = raw.trim();
    if (!line) return;
    const heading = HEADING.exec(line);
    if (heading) {
      const name = heading[1]!.replace(/[:：]$/, '').trim();
      section = HEADING_ALIASES[name.toLowerCase()] ?? 'unknown';
      if (section === 'unknown') problems.push(`line ${index + 1}: unknown heading "${name}"`);
      return;
    }
    if (section === 'unknown') return;
    if (section === 'none') {
      if (!reportedUnheaded) problems.push(`line ${index + 1}: text before any section heading`);
      reportedUnheaded = true;
      return;
    }
    const text = cleanText(BULLET.exec(line)?.[1] ?? line);
    if (text) parsed.push({ section, text });
  });
  if (problems.length) {
    throw new ClinAgentError(
      'VALIDATION_FAILED',
      `The hot memory document cannot be read:\n- ${problems.join('\n- ')}\nPut every line under one of these headings: ${ACCEPTED_HEADINGS.join(', ')}.`,
      { field: 'content', problems, acceptedHeadings: ACCEPTED_HEADINGS },
    );
  }
  return parsed;
}
