import { renderDocx, renderMarkdown } from '../../../core/documents/index.js';
import type { DossierContent } from './build-dossier.js';
import { dossierOutline } from './outline.js';

/** The dossier as a JSON file (indented, as people open it). */
export function dossierJson(content: DossierContent): string {
  return `${JSON.stringify(content, null, 2)}\n`;
}

/** The dossier as Markdown; without the transcript when `transcript` is false (what the model is shown). */
export function dossierMarkdown(content: DossierContent, options: { transcript?: boolean } = {}): string {
  return renderMarkdown(dossierOutline(content, { transcript: options.transcript ?? true }));
}

/** The dossier as a Word document (.docx), transcript included. */
export function dossierDocx(content: DossierContent): Promise<Buffer> {
  return renderDocx(dossierOutline(content, { transcript: true }), { title: content.title });
}
