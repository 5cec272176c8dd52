import { getPath, isPresent } from '../../../agent/staged/context-paths.js';
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
 * Item id -> the context values that answer it, all of them needed. Only items the five context fields can
 * really answer are here; a filled field counts as an answer, whose wording the researcher still checks.
 * Stricter than "something was said" where the item names its parts: outcomes (16) need the measure and time
 * point, sample size (19) the assumptions, eligibility (14a) both lists of criteria.
 */
export const SPIRIT_CONTEXT_MAP: Readonly<Record<string, readonly string[]>> = {
  '9a': ['scientificQuestion.background', 'scientificQuestion.rationale'],
  '10': ['scientificQuestion.question'],
  '12': ['studyDesign.type'],
  '14a': ['pico.population', 'pico.eligibility.inclusion', 'pico.eligibility.exclusion'],
  '15a': ['pico.intervention', 'pico.comparison'],
  '16': ['endpoints.primary.name', 'endpoints.primary.measure', 'endpoints.primary.timepoint'],
  '18': ['studyDesign.visits'],
  '19': ['sampleSize.method', 'sampleSize.total', 'sampleSize.assumptions'],
  // A randomisation method ("computer-generated blocks of 4, stratified by site") answers both.
  '21a': ['studyDesign.randomization'],
  '21b': ['studyDesign.randomization'],
  '22': ['studyDesign.allocation'],
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
