import { ClinAgentError } from '../../../core/errors.js';
import type { LlmGateway } from '../../../core/llm/gateway.js';
import { imagePart, textPart } from '../../../core/llm/types.js';
import { DATA_NOT_INSTRUCTIONS, dataBlock } from '../../../core/llm/untrusted-data.js';
import { parseStructuredOutput } from '../../../core/structured/parse.js';
import type { OutputType } from '../../../core/structured/output-types.js';
import type { TraceScope } from '../../../core/trace/store.js';
import type { ImageMimeType } from './check-image.js';

/** The configured vision model and the gateway that reaches it (createVisionGateway). */
export interface VisionModel {
  gateway: LlmGateway;
  model: string;
}

export type Likelihood = 'low' | 'moderate' | 'high';

/** `analyze_skin_image`'s answer (seed 003 section 3). */
export interface SkinImageAnalysis {
  findings: string[];
  conditions: Array<{ name: string; likelihood: Likelihood }>;
}

const LIKELIHOODS: readonly Likelihood[] = ['low', 'moderate', 'high'];
/** Bounds what one answer can add to the consult's context, whatever the model writes. */
const MAX_ITEMS = 10;
const MAX_ITEM_CHARS = 300;

const OUTPUT_TYPE: OutputType = {
  name: 'skin_image_analysis',
  schema: {
    type: 'object',
    properties: {
      findings: { type: 'array', items: { type: 'string' } },
      conditions: {
        type: 'array',
        items: { type: 'object', properties: { name: { type: 'string' }, likelihood: { type: 'string', enum: [...LIKELIHOODS] } }, required: ['name', 'likelihood'] },
      },
    },
    required: ['findings', 'conditions'],
  },
};

// The model describes and ranks; the consult decides. Asking for morphology first keeps the answer about what
// is visible, and "cannot be judged" is allowed so a blurred photo does not produce confident conditions.
const SYSTEM_PROMPT = [
  'You assist a dermatology consultation by describing one photo of skin. You do not make the diagnosis: the consult combines your description with the history.',
  'Describe what is visible in clinical terms: morphology (macule, papule, plaque, vesicle, bulla, pustule, nodule, wheal, erosion, ulcer, scale, crust), colour, border, size if it can be estimated, distribution and arrangement.',
  'Then list the conditions the appearance is consistent with, most likely first, each with a likelihood of "low", "moderate" or "high". Name any warning sign you see (an asymmetric, irregular or multicoloured pigmented lesion; blistering or skin peeling; rapidly spreading redness; involvement of the lips, eyes or genitals).',
  'If the photo is not of skin, or is too blurred, dark or distant to judge, say so in findings and give no conditions.',
  'Answer with one JSON object only, no prose: {"findings": ["..."], "conditions": [{"name": "...", "likelihood": "low|moderate|high"}]}. Write in the language of the context.',
  DATA_NOT_INSTRUCTIONS,
].join('\n');

/**
 * Sends one photo to the vision model through the shared gateway and reads its JSON answer with the shared
 * tolerant parser. `context` (what the patient reported, as the consult model summarised it) goes in as a
 * declared data block, so text in it can never act as instructions. An answer that is not the expected JSON is
 * LLM_BAD_RESPONSE; items the model got wrong (an unknown likelihood, an empty name) are dropped, not guessed.
 */
export async function analyzeSkinImage(
  vision: VisionModel,
  input: { bytes: Buffer; mimeType: ImageMimeType; context: string },
  trace?: TraceScope,
): Promise<SkinImageAnalysis> {
  const dataUrl = `data:${input.mimeType};base64,${input.bytes.toString('base64')}`;
  const context = input.context.trim() === '' ? '(no context given)' : input.context;
  const response = await vision.gateway.chat(
    {
      model: vision.model,
      temperature: 0.1,
      maxTokens: 800,
      messages: [
        { role: 'system', content: SYSTEM_PROMPT },
        { role: 'user', content: [textPart(`Describe this skin photo. What the patient reported:\n${dataBlock('context', context)}`), imagePart(dataUrl, 'high')] },
      ],
    },
    trace,
  );
  const parsed = parseStructuredOutput(response.content, OUTPUT_TYPE);
  if (!parsed.success) {
    throw new ClinAgentError(
      'LLM_BAD_RESPONSE',
      `The vision model "${vision.model}" did not answer with the expected JSON {findings, conditions} (${parsed.error}). Try the image once more, or ask the patient to describe the lesion instead.`,
      { model: vision.model, parsedAs: parsed.parsedAs },
    );
  }
  return { findings: readFindings(parsed.data.findings), conditions: readConditions(parsed.data.conditions) };
}

function readFindings(value: unknown): string[] {
  if (typeof value === 'string') return value.trim() ? [clip(value)] : [];
  if (!Array.isArray(value)) return [];
  return value.filter((item): item is string => typeof item === 'string' && item.trim() !== '').slice(0, MAX_ITEMS).map(clip);
}

function readConditions(value: unknown): SkinImageAnalysis['conditions'] {
  if (!Array.isArray(value)) return [];
  const conditions: SkinImageAnalysis['conditions'] = [];
  for (const item of value) {
    if (typeof item !== 'object' || item === null) continue;
    const { name, likelihood } = item as Record<string, unknown>;
    const level = readLikelihood(likelihood);
    if (typeof name !== 'string' || name.trim() === '' || !level) continue;
    conditions.push({ name: clip(name), likelihood: level });
    if (conditions.length === MAX_ITEMS) break;
  }
  return conditions;
}

/** Models write "Medium" or "中" as often as "moderate"; anything else is not a likelihood we can rank. */
function readLikelihood(value: unknown): Likelihood | undefined {
  if (typeof value !== 'string') return undefined;
  const word = value.trim().toLowerCase();
  if ((LIKELIHOODS as readonly string[]).includes(word)) return word as Likelihood;
  return ({ medium: 'moderate', 低: 'low', 中: 'moderate', 中等: 'moderate', 高: 'high' } as Record<string, Likelihood>)[word];
}

function clip(text: string): string {
  const trimmed = text.trim();
  return trimmed.length > MAX_ITEM_CHARS ? `${trimmed.slice(0, MAX_ITEM_CHARS - 1)}…` : trimmed;
}
