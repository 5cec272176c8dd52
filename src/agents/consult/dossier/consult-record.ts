import type { ToolCallResult } from '../../../core/tools/registry.js';
import type { RecordedToolOutput } from '../consult-state.js';
import type { MedicationOption, MedicationSearch } from '../types.js';

/** The tools whose answers are facts of the consult: what was offered, what an image showed, how urgent it was. */
const RECORDED_TOOLS = new Set(['search_medication', 'analyze_skin_image', 'assess_risk']);

/** Enough for any consult a patient has; a consult past it keeps its latest answers. */
const MAX_RECORDED = 60;

/** The consult's record of tool answers with this turn's successful calls added. */
export function recordToolOutputs(previous: readonly RecordedToolOutput[] | undefined, calls: readonly ToolCallResult[], at = new Date().toISOString()): RecordedToolOutput[] {
  const added = calls.filter((call) => call.success && RECORDED_TOOLS.has(call.toolName)).map((call) => ({ tool: call.toolName, result: call.result, at }));
  return [...(previous ?? []), ...added].slice(-MAX_RECORDED);
}

const asObject = (value: unknown): Record<string, unknown> => (value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {});
const strings = (value: unknown): string[] => (Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string' && item.trim() !== '') : []);

function isMedication(value: unknown): value is MedicationOption {
  const drug = asObject(value);
  return typeof drug.name === 'string' && typeof drug.class === 'string' && typeof drug.route === 'string' && typeof drug.dosage === 'string';
}

/**
 * What the recorded answers say: every drug search_medication offered (each once, latest dosage and notes), its
 * warnings, and every image finding, with the conditions the image was consistent with.
 */
export function recordedFindings(outputs: readonly RecordedToolOutput[] | undefined): { medications?: MedicationSearch; imageFindings: string[] } {
  const offered = new Map<string, MedicationOption>();
  const warnings = new Set<string>();
  const imageFindings: string[] = [];
  let searched = false;
  for (const output of outputs ?? []) {
    const result = asObject(output.result);
    if (output.tool === 'search_medication') {
      searched = true;
      for (const drug of Array.isArray(result.medications) ? result.medications : []) if (isMedication(drug)) offered.set(drug.name, drug);
      for (const warning of strings(result.warnings)) warnings.add(warning);
    } else if (output.tool === 'analyze_skin_image') {
      imageFindings.push(...strings(result.findings));
      const conditions = (Array.isArray(result.conditions) ? result.conditions : []).map(asObject).filter((c) => typeof c.name === 'string');
      if (conditions.length) imageFindings.push(`Consistent with: ${conditions.map((c) => (typeof c.likelihood === 'string' ? `${c.name as string} (${c.likelihood})` : (c.name as string))).join(', ')}`);
    }
  }
  return { ...(searched ? { medications: { medications: [...offered.values()], warnings: [...warnings] } } : {}), imageFindings };
}
