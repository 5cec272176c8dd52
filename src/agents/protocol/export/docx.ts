import { renderDocx } from '../../../core/documents/index.js';
import type { ProtocolDraft } from './draft.js';
import { protocolOutline } from './outline.js';

/** The protocol draft as a Word document (.docx). */
export function protocolDocx(draft: ProtocolDraft): Promise<Buffer> {
  return renderDocx(protocolOutline(draft), { title: draft.title });
}
