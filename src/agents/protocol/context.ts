/**
 * What a protocol collects, stage by stage (seed 001's ContextResponse fields). Every field is optional: the
 * context fills as the researcher talks, and what is still missing is what the reflexion rules, the export and
 * the SPIRIT coverage point at.
 */

/** One eligibility criterion: the sentence for the protocol, and, when it can be checked, the check. */
export interface EligibilityCriterion {
  text: string;
  /** The variable of the trial's data dictionary the check reads (`age`, `egfr`). */
  field?: string;
  operator?: '>=' | '<=' | '>' | '<' | '==' | '!=' | 'between' | 'in';
  /** A number or text; `[low, high]` for `between`; a list for `in`. */
  value?: number | string | boolean | Array<number | string>;
  unit?: string;
}

/** One visit of the schedule: its day relative to baseline (day 0) and the window around it, in days. */
export interface ScheduledVisit {
  name: string;
  day: number;
  windowBefore?: number;
  windowAfter?: number;
  /** The trial's event name for the visit (REDCap unique event name), when the trial exists. */
  event?: string;
}

export interface ScientificQuestion {
  question?: string;
  background?: string;
  rationale?: string;
  /** The specific objectives, on benefits and on harms (SPIRIT 2025 item 10). */
  objectives?: { benefits?: string; harms?: string };
}

export interface Pico {
  population?: string;
  intervention?: string;
  comparison?: string;
  outcome?: string;
  eligibility?: { inclusion?: EligibilityCriterion[]; exclusion?: EligibilityCriterion[] };
}

export interface StudyDesign {
  type?: string;
  allocation?: string;
  blinding?: string;
  randomization?: string;
  /** Who will generate the random allocation sequence, and how (SPIRIT 2025 item 21a). */
  sequenceGeneration?: string;
  /** How the sequence is concealed until assignment (SPIRIT 2025 item 22); `allocation` is the ratio. */
  allocationConcealment?: string;
  duration?: string;
  visits?: ScheduledVisit[];
  /** The variable holding each visit's date, and the baseline date variable, for the visit-window checks. */
  visitDateField?: string;
}

export interface SampleSizeSection {
  method?: string;
  total?: number;
  perGroup?: number[];
  alpha?: number;
  power?: number;
  assumptions?: string[] | string;
  /** The calculator's inputs as last used (design, effect, dropout...), so the card opens pre-filled. */
  inputs?: Record<string, unknown>;
}

export interface Endpoint {
  name?: string;
  measure?: string;
  timepoint?: string;
}

export interface Endpoints {
  primary?: Endpoint;
  secondary?: Endpoint[];
}

/** The five context fields, keyed as the API names them. */
export interface ProtocolContext {
  scientificQuestion?: ScientificQuestion;
  pico?: Pico;
  studyDesign?: StudyDesign;
  sampleSize?: SampleSizeSection;
  endpoints?: Endpoints;
}

const PROTOCOL_CONTEXT_FIELDS = ['scientificQuestion', 'pico', 'studyDesign', 'sampleSize', 'endpoints'] as const;
type ProtocolContextField = (typeof PROTOCOL_CONTEXT_FIELDS)[number];

/** The stage that fills each context field, in stage order. */
export const PROTOCOL_STAGES: ReadonlyArray<{ id: string; field: ProtocolContextField; title: string }> = [
  { id: 'scientific_question', field: 'scientificQuestion', title: 'Scientific question' },
  { id: 'pico', field: 'pico', title: 'PICO' },
  { id: 'study_design', field: 'studyDesign', title: 'Study design' },
  { id: 'sample_size', field: 'sampleSize', title: 'Sample size' },
  { id: 'endpoints', field: 'endpoints', title: 'Endpoints' },
];
