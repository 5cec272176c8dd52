export type { DocumentBlock } from './blocks.js';
export { renderMarkdown } from './markdown.js';
export { renderDocx } from './docx.js';
