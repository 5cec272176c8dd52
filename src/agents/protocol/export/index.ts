export type { ProtocolDraft } from './draft.js';
export { protocolMarkdown } from './markdown.js';
export { protocolDocx } from './docx.js';
