import { getPath, isPresent } from '../../../runtime/staged/context-paths.js';
import type { ProtocolContext } from '../context.js';
import { SPIRIT_2025_ITEMS, type SpiritItem } from './spirit-2025.js';

/**
 * Which SPIRIT 2025 items the protocol context already answers. The shape restates SpiritCoverage of
 * src/contract/protocol-agent.ts, because an agent may not import the contract (.dependency-cruiser.cjs); the
 * test holds the two together.
 */
export interface SpiritCoverage {
  /** Checklist rows (items and sub-items), so that covered + open = total. */
  total: number;
  covered: Array<SpiritItem & { from: string[] }>;
  open: SpiritItem[];
}

/**
 * Item id -> the context values that answer it, all of them needed. An item is here only when the five context
 * fields hold a value that answers what it asks; a filled field counts as an answer, whose wording the researcher
 * still checks. Each item by the field made for it, never by a neighbour: objectives on benefits and harms (10),
 * not the question; who generates the sequence (21a), not the randomisation method, which names no one; the
 * concealment mechanism (22), not `allocation`, which is the ratio ("1:1"). Stricter than "something was said"
 * where the item names its parts: objectives need both benefits and harms, the design (12) its allocation ratio,
 * outcomes (16) the measure and time point, sample size (19) the assumptions, eligibility (14a) both lists.
 */
export const SPIRIT_CONTEXT_MAP: Readonly<Record<string, readonly string[]>> = {
  '9a': ['scientificQuestion.background', 'scientificQuestion.rationale'],
  '10': ['scientificQuestion.objectives.benefits', 'scientificQuestion.objectives.harms'],
  '12': ['studyDesign.type', 'studyDesign.allocation'],
  '14a': ['pico.population', 'pico.eligibility.inclusion', 'pico.eligibility.exclusion'],
  '15a': ['pico.intervention', 'pico.comparison'],
  '16': ['endpoints.primary.name', 'endpoints.primary.measure', 'endpoints.primary.timepoint'],
  '18': ['studyDesign.visits'],
  '19': ['sampleSize.method', 'sampleSize.total', 'sampleSize.assumptions'],
  // The type of randomisation ("blocks of 4, stratified by site"); the item's restriction details belong elsewhere.
  '21a': ['studyDesign.sequenceGeneration'],
  '21b': ['studyDesign.randomization'],
  '22': ['studyDesign.allocationConcealment'],
  '24a': ['studyDesign.blinding'],
};

export function spiritCoverage(context: ProtocolContext): SpiritCoverage {
  const covered: SpiritCoverage['covered'] = [];
  const open: SpiritItem[] = [];
  for (const item of SPIRIT_2025_ITEMS) {
    const from = SPIRIT_CONTEXT_MAP[item.id];
    const entry = { id: item.id, section: item.section, title: item.title };
    if (from && from.every((path) => isPresent(getPath(context, path)))) covered.push({ ...entry, from: [...from] });
    else open.push(entry);
  }
  return { total: SPIRIT_2025_ITEMS.length, covered, open };
}
