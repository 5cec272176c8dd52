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
 * Item id -> the context values that answer it, all of them needed. An item is here only when the five context
 * fields hold a value that answers what it asks; a filled field counts as an answer, whose wording the researcher
 * still checks. Left out on purpose, since no field answers them: 10 (objectives on benefits and harms: the
 * question states neither), 21a (who generates the sequence: the randomisation method names no one) and 22 (the
 * concealment mechanism: `allocation` is the ratio, "1:1"). Stricter than "something was said" where the item
 * names its parts: the design (12) needs its allocation ratio, outcomes (16) the measure and time point, sample
 * size (19) the assumptions, eligibility (14a) both lists of criteria.
 */
export const SPIRIT_CONTEXT_MAP: Readonly<Record<string, readonly string[]>> = {
  '9a': ['scientificQuestion.background', 'scientificQuestion.rationale'],
  '12': ['studyDesign.type', 'studyDesign.allocation'],
  '14a': ['pico.population', 'pico.eligibility.inclusion', 'pico.eligibility.exclusion'],
  '15a': ['pico.intervention', 'pico.comparison'],
  '16': ['endpoints.primary.name', 'endpoints.primary.measure', 'endpoints.primary.timepoint'],
  '18': ['studyDesign.visits'],
  '19': ['sampleSize.method', 'sampleSize.total', 'sampleSize.assumptions'],
  // The type of randomisation ("blocks of 4, stratified by site"); the item's restriction details belong elsewhere.
  '21b': ['studyDesign.randomization'],
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
