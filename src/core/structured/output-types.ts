import { ClinAgentError } from '../errors.js';

/** JSON Schema (the subset the parser fills and checks: object properties, types, required, enum, default). */
export type JsonSchema = Record<string, unknown>;

export interface OutputType {
  /** `text` means free text, no structure expected. */
  name: string;
  schema?: JsonSchema;
  /** The field shown to the user as the answer; the raw text is shown when it is absent. */
  answerField?: string;
}

/**
 * Output types shipped with the platform. A scenario names one of these or declares its own schema.
 */
export const BUILTIN_OUTPUT_TYPES: Record<string, OutputType> = {
  text: { name: 'text' },
  qa_answer: {
    name: 'qa_answer',
    answerField: 'answer',
    schema: {
      type: 'object',
      properties: {
        answer: { type: 'string', description: 'The answer, in the language of the question' },
        citations: { type: 'array', items: { type: 'string' }, description: 'Reference labels such as [1] that support the answer' },
        confidence: { type: 'string', enum: ['high', 'medium', 'low'] },
      },
      required: ['answer', 'citations', 'confidence'],
    },
  },
  data_check_report: {
    name: 'data_check_report',
    answerField: 'summary',
    schema: {
      type: 'object',
      properties: {
        summary: { type: 'string' },
        completion_rate: { type: 'number', description: 'Share of required fields filled, 0 to 1' },
        issues: {
          type: 'array',
          items: {
            type: 'object',
            properties: { record_id: { type: 'string' }, field: { type: 'string' }, problem: { type: 'string' } },
            required: ['record_id', 'field', 'problem'],
          },
        },
        action_items: { type: 'array', items: { type: 'string' } },
      },
      required: ['summary', 'completion_rate', 'issues', 'action_items'],
    },
  },
};

export function resolveOutputType(spec: string | OutputType | undefined): OutputType {
  if (spec === undefined) return BUILTIN_OUTPUT_TYPES.text!;
  if (typeof spec !== 'string') return spec;
  const builtin = BUILTIN_OUTPUT_TYPES[spec];
  if (!builtin) {
    throw new ClinAgentError('VALIDATION_FAILED', `Unknown output type "${spec}". Use one of ${Object.keys(BUILTIN_OUTPUT_TYPES).join(', ')}, or declare { name, schema } with a JSON Schema.`, { field: 'output_type' });
  }
  return builtin;
}
