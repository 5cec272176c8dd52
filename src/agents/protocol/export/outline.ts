import type { DocumentBlock } from '../../../core/documents/index.js';
import { spiritCoverage } from '../spirit/coverage.js';
import type { ProtocolDraft } from './draft.js';
import { missingFields } from './missing.js';
import { stageSection } from './stage-sections.js';

/**
 * The export's content, for every format: the title, a section per stage in stage order (what is missing, and
 * whether the stage is still a draft), then the SPIRIT 2025 items the protocol does not answer yet.
 */
export function protocolOutline(draft: ProtocolDraft): DocumentBlock[] {
  const context = draft.context as Record<string, unknown>;
  const completed = draft.stages.filter((stage) => stage.completed).length;
  const blocks: DocumentBlock[] = [
    { kind: 'heading', level: 1, text: draft.title },
    { kind: 'paragraph', text: `Protocol draft generated ${draft.generatedAt.toISOString()}. Stages completed: ${completed} of ${draft.stages.length}.` },
  ];

  draft.stages.forEach((stage, index) => {
    const data = context[stage.contextField];
    const missing = missingFields(stage.contextField, data);
    const body = stageSection(stage.contextField, data, context);
    blocks.push({ kind: 'heading', level: 2, text: `${index + 1}. ${stage.stageName}${stage.completed ? '' : ' (draft)'}` });
    if (!stage.completed) blocks.push({ kind: 'note', tone: 'caution', label: 'Draft', text: 'this stage is not completed yet; its content may still change.' });
    if (missing.length) blocks.push({ kind: 'note', tone: 'warning', label: 'Missing', text: missing.join(', ') });
    blocks.push(...(body.length ? body : [{ kind: 'paragraph' as const, text: 'Nothing recorded yet.' }]));
  });

  const spirit = spiritCoverage(draft.context);
  blocks.push({ kind: 'heading', level: 2, text: 'SPIRIT 2025 items still open' });
  if (!spirit.open.length) {
    blocks.push({ kind: 'paragraph', text: `The protocol answers all ${spirit.total} SPIRIT 2025 checklist rows.` });
    return blocks;
  }
  blocks.push(
    {
      kind: 'paragraph',
      text: `The protocol answers ${spirit.covered.length} of the ${spirit.total} SPIRIT 2025 checklist rows (Chan et al., 2025). Still open:`,
    },
    { kind: 'table', columns: ['Item', 'Section', 'What the protocol should address'], rows: spirit.open.map((item) => [item.id, item.section, item.title]) },
  );
  return blocks;
}
