import type { EligibilityCriterion, Endpoint, Endpoints, Pico, SampleSizeSection, ScheduledVisit, ScientificQuestion, StudyDesign } from '../context.js';
import type { DocumentBlock } from '../../../core/documents/index.js';

/**
 * The body of each stage's section: its context field as labelled text, lists and tables. Fields not said yet
 * are left out here; the section's "Missing" line names the required ones.
 *
 * The context is stored as open JSON (what a model extracted, what a user patched), so a value may not have the
 * type ProtocolContext gives it: a list may be one sentence, a criterion a bare string. Every value is read
 * defensively and shown as text rather than dropped or failing the export.
 */

/** `totalCost` -> "Total cost". */
const humanLabel = (key: string) =>
  key.replace(/([a-z0-9])([A-Z])/g, (_match, before: string, capital: string) => `${before} ${capital.toLowerCase()}`).replace(/^./, (first) => first.toUpperCase());

/** Any JSON value as one line of text: lists joined by "; ", objects as "Key: value". */
function plain(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (Array.isArray(value)) return value.map(plain).filter(Boolean).join('; ');
  if (typeof value === 'object') return Object.entries(value).map(([key, inner]) => `${humanLabel(key)}: ${plain(inner)}`).join('; ');
  return String(value).trim();
}

const text = (value: unknown): string | undefined => plain(value) || undefined;

/** A list as stored, or a single value as a list of one. */
const asList = (value: unknown): unknown[] => (Array.isArray(value) ? value : value === undefined || value === null || value === '' ? [] : [value]);

function fields(pairs: Array<[label: string, value: unknown]>): DocumentBlock[] {
  return pairs.flatMap(([label, value]) => {
    const shown = text(value);
    return shown === undefined ? [] : [{ kind: 'field' as const, label, value: shown }];
  });
}

function listUnder(title: string, items: string[], ordered: boolean): DocumentBlock[] {
  return items.length ? [{ kind: 'heading', level: 3, text: title }, { kind: 'list', ordered, items }] : [];
}

function scientificQuestionSection(data: ScientificQuestion): DocumentBlock[] {
  const objectives = data.objectives !== null && typeof data.objectives === 'object' ? data.objectives : { benefits: data.objectives };
  return fields([
    ['Research question', data.question],
    ['Background', data.background],
    ['Rationale', data.rationale],
    ['Objectives (benefits)', objectives.benefits],
    ['Objectives (harms)', objectives.harms],
  ]);
}

const OPERATOR_WORDS: Record<NonNullable<EligibilityCriterion['operator']>, string> = {
  '>=': '≥', '<=': '≤', '>': '>', '<': '<', '==': '=', '!=': '≠', between: 'between', in: 'one of',
};

/** "Age ≥ 18 years" read back from the check, so a reader sees what the edit check will test. */
function criterionCheck(criterion: EligibilityCriterion): string | undefined {
  if (!criterion.field || !criterion.operator || criterion.value === undefined) return undefined;
  const { value, operator, unit } = criterion;
  const shown =
    operator === 'between' && Array.isArray(value) && value.length === 2 ? `${value[0]} and ${value[1]}` : Array.isArray(value) ? value.join(', ') : String(value);
  // An operator outside the list (stored JSON is not checked against the type) is shown as written.
  return `${criterion.field} ${OPERATOR_WORDS[operator] ?? operator} ${shown}${unit ? ` ${unit}` : ''}`;
}

function criterionLine(item: unknown): string {
  if (item === null || typeof item !== 'object') return plain(item);
  const criterion = item as EligibilityCriterion;
  const check = criterionCheck(criterion);
  const sentence = text(criterion.text) ?? '';
  if (!check) return sentence;
  return sentence ? `${sentence} (check: ${check})` : `Check: ${check}`;
}

function picoSection(data: Pico): DocumentBlock[] {
  const criteria = (list: unknown) => asList(list).map(criterionLine).filter((line) => line !== '');
  return [
    ...fields([['Population', data.population], ['Intervention', data.intervention], ['Comparison', data.comparison], ['Outcome', data.outcome]]),
    ...listUnder('Inclusion criteria', criteria(data.eligibility?.inclusion), true),
    ...listUnder('Exclusion criteria', criteria(data.eligibility?.exclusion), true),
  ];
}

const signed = (days: unknown, sign: '-' | '+') => (typeof days === 'number' ? `${sign}${Math.abs(days)}` : (text(days) ?? ''));

function studyDesignSection(data: StudyDesign): DocumentBlock[] {
  const visits = asList(data.visits).map((visit): Partial<ScheduledVisit> => (visit !== null && typeof visit === 'object' ? visit : { name: plain(visit) }));
  const hasEvents = visits.some((visit) => text(visit.event) !== undefined);
  const schedule: DocumentBlock[] = visits.length
    ? [
        { kind: 'heading', level: 3, text: 'Visit schedule' },
        {
          kind: 'table',
          columns: ['Visit', 'Day', 'Window (days)', ...(hasEvents ? ['EDC event'] : [])],
          rows: visits.map((visit) => [
            text(visit.name) ?? '',
            text(visit.day) ?? '',
            [signed(visit.windowBefore, '-'), signed(visit.windowAfter, '+')].filter(Boolean).join(' / ') || '—',
            ...(hasEvents ? [text(visit.event) ?? ''] : []),
          ]),
        },
      ]
    : [];
  return [
    ...fields([
      ['Design type', data.type],
      ['Allocation', data.allocation],
      ['Randomization', data.randomization],
      ['Sequence generation', data.sequenceGeneration],
      ['Allocation concealment', data.allocationConcealment],
      ['Blinding', data.blinding],
      ['Duration', data.duration],
    ]),
    ...schedule,
    ...fields([['Visit date variable', data.visitDateField]]),
  ];
}

/** Power as the percentage protocols write (0.8 -> 80%); a value already above 1 is taken as a percentage. */
const percent = (power: unknown) => (typeof power === 'number' ? `${Math.round((power <= 1 ? power * 100 : power) * 100) / 100}%` : power);

/**
 * Each arm named as the protocol names it: the calculator's group 1 is the intervention and group 2 the comparison
 * (its differences are group 1 minus group 2); a single-arm result is [n, 0].
 */
function armSizes(perGroup: unknown, pico: Pico | undefined): string {
  const sizes = asList(perGroup);
  if (sizes.length === 2 && Number(sizes[1]) === 0) return `single arm: ${plain(sizes[0])}`;
  const named = (label: string, what: unknown) => (text(what) ? `${label} (${text(what)})` : label);
  const arms = [named('intervention', pico?.intervention), named('comparison', pico?.comparison)];
  return sizes.map((n, index) => `${arms[index] ?? `arm ${index + 1}`}: ${plain(n)}`).join('; ');
}

function sampleSizeSection(data: SampleSizeSection, pico: Pico | undefined): DocumentBlock[] {
  const perGroup = armSizes(data.perGroup, pico);
  const assumptions = asList(data.assumptions).map(plain);
  // `inputs` only pre-fills the calculator card; the method and assumptions already say what they mean.
  return [
    ...fields([['Method', data.method], ['Per group', perGroup], ['Total', data.total], ['Alpha', data.alpha], ['Power', percent(data.power)]]),
    ...listUnder('Assumptions', assumptions.filter((line) => line.trim() !== ''), false),
  ];
}

function endpointLine(item: unknown): string {
  if (item === null || typeof item !== 'object') return plain(item);
  const endpoint = item as Endpoint;
  const details = [text(endpoint.measure), text(endpoint.timepoint) && `at ${text(endpoint.timepoint)}`].filter(Boolean).join(', ');
  const name = text(endpoint.name) ?? '(unnamed)';
  return details ? `${name}: ${details}` : name;
}

function endpointsSection(data: Endpoints): DocumentBlock[] {
  const primary: Endpoint = data.primary !== null && typeof data.primary === 'object' ? data.primary : { name: text(data.primary) };
  return [
    ...fields([['Primary endpoint', primary.name], ['Measure', primary.measure], ['Timepoint', primary.timepoint]]),
    ...listUnder('Secondary endpoints', asList(data.secondary).map(endpointLine).filter((line) => line !== ''), true),
  ];
}

/** A context field this export has no layout for (an admin added a stage): its keys as labelled lines. */
function genericSection(data: unknown): DocumentBlock[] {
  if (data === null || typeof data !== 'object' || Array.isArray(data)) return fields([['Value', plain(data)]]);
  return fields(Object.entries(data).map(([key, value]) => [humanLabel(key), plain(value)]));
}

/** `context`: the whole protocol, for what one section names from another (the arms of the sample size). */
export function stageSection(contextField: string, data: unknown, context: Record<string, unknown> = {}): DocumentBlock[] {
  if (data === undefined || data === null) data = {};
  if (typeof data !== 'object' || Array.isArray(data)) return genericSection(data);
  const value = data as never;
  switch (contextField) {
    case 'scientificQuestion': return scientificQuestionSection(value);
    case 'pico': return picoSection(value);
    case 'studyDesign': return studyDesignSection(value);
    case 'sampleSize': return sampleSizeSection(value, context.pico !== null && typeof context.pico === 'object' ? (context.pico as Pico) : undefined);
    case 'endpoints': return endpointsSection(value);
    default: return genericSection(data);
  }
}
