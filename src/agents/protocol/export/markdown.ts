import { renderMarkdown } from '../../../core/documents/index.js';
import type { ProtocolDraft } from './draft.js';
import { protocolOutline } from './outline.js';

/** The protocol draft as one Markdown (GFM) document. */
export function protocolMarkdown(draft: ProtocolDraft): string {
  return renderMarkdown(protocolOutline(draft));
}
