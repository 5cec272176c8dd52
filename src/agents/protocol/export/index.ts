export type { ProtocolDraft, ProtocolDraftStage } from './draft.js';
export { REQUIRED_FIELDS, missingFields } from './missing.js';
export { protocolOutline } from './outline.js';
export { protocolMarkdown } from './markdown.js';
export { protocolDocx } from './docx.js';
