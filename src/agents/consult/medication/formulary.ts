import { readFileSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { ClinAgentError, errorMessage, formatIssues } from '../../../core/errors.js';
import { packageRoot } from '../../../core/paths.js';

/**
 * The shipped formulary (data/consult/formulary.json): which drugs the consult may mention for which condition,
 * and what rules each one out. It is data, with its sources named in the file, so a pharmacist can review and
 * extend it without reading code; the loader checks every cross-reference (a drug's condition or allergy class,
 * a cross-reactivity rule) so a typo fails at start-up instead of silently offering a drug.
 */

const Suitability = z.enum(['avoid', 'caution', 'ok']);
type Suitability = z.infer<typeof Suitability>;

const Drug = z.strictObject({
  name: z.string().min(1),
  /** Other names, brand names and Chinese names: an allergy to any of them is an allergy to this drug. */
  aliases: z.array(z.string().min(1)).default([]),
  class: z.string().min(1),
  /** The allergy classes the drug belongs to (keys of `allergyClasses`). */
  allergyClasses: z.array(z.string().min(1)),
  route: z.enum(['topical', 'oral', 'other']),
  /** Adult dosage. */
  dosage: z.string().min(1),
  /** Condition ids (keys of `conditions`). */
  conditions: z.array(z.string().min(1)).min(1),
  pregnancy: Suitability,
  pregnancyNote: z.string().optional(),
  breastfeeding: Suitability,
  breastfeedingNote: z.string().optional(),
  /** Youngest age in years (0.17 is 2 months). */
  minAge: z.number().min(0).max(18),
  minAgeNote: z.string().optional(),
  notes: z.string().optional(),
});
export type FormularyDrug = z.infer<typeof Drug>;

const ClassRule = z.strictObject({
  /** An allergy class (a key of `allergyClasses`); its words name the class's members. */
  class: z.string().min(1),
  pregnancy: Suitability.optional(),
  pregnancyNote: z.string().optional(),
  breastfeeding: Suitability.optional(),
  breastfeedingNote: z.string().optional(),
  minAge: z.number().min(0).max(18).optional(),
  minAgeNote: z.string().optional(),
});
export type ClassRule = z.infer<typeof ClassRule>;

const FormularyFile = z.strictObject({
  title: z.string(),
  version: z.string(),
  disclaimer: z.string(),
  sources: z.array(z.string().min(1)).min(1),
  /** Condition id -> its names in English and Chinese. */
  conditions: z.record(z.string(), z.strictObject({ names: z.array(z.string().min(1)).min(1) })),
  /** Allergy class -> the words (class, drug and brand names, both languages) that name an allergy to it. */
  allergyClasses: z.record(z.string(), z.array(z.string().min(1)).min(1)),
  /** Words naming several classes at once ("beta-lactam"). */
  umbrellaAllergies: z.array(z.strictObject({ terms: z.array(z.string().min(1)).min(1), classes: z.array(z.string()).min(1) })).default([]),
  /** An allergy to `allergy` also rules out drugs of class `excludes`, for `reason`. */
  crossReactivity: z.array(z.strictObject({ allergy: z.string(), excludes: z.string(), reason: z.string().min(1) })).default([]),
  /**
   * What rules out every member of a class, the ones the formulary does not list included ("minocycline" when
   * pregnant): a model names drugs from its own knowledge, and the reply check must know them by their class.
   */
  classRules: z.array(ClassRule).default([]),
  drugs: z.array(Drug).min(1),
});
export type Formulary = z.infer<typeof FormularyFile>;

const defaultFormularyPath = (): string => path.join(packageRoot(), 'data', 'consult', 'formulary.json');

function invalid(file: string, problems: string[]): ClinAgentError {
  return new ClinAgentError(
    'CONFIG_INVALID',
    `The formulary ${file} is invalid; fix these entries:\n${problems.join('\n')}`,
    { file, problems },
  );
}

/** References between sections, which the schema alone cannot see. */
function referenceProblems(formulary: Formulary): string[] {
  const problems: string[] = [];
  const classes = new Set(Object.keys(formulary.allergyClasses));
  const conditions = new Set(Object.keys(formulary.conditions));
  const names = new Set<string>();
  formulary.drugs.forEach((drug, index) => {
    const at = `drugs.${index} (${drug.name})`;
    if (names.has(drug.name)) problems.push(`${at}: the name is used twice; names must be unique`);
    names.add(drug.name);
    for (const id of drug.conditions) if (!conditions.has(id)) problems.push(`${at}: condition "${id}" is not in "conditions" (${[...conditions].join(', ')})`);
    for (const id of drug.allergyClasses) if (!classes.has(id)) problems.push(`${at}: allergy class "${id}" is not in "allergyClasses"`);
  });
  formulary.umbrellaAllergies.forEach((umbrella, index) => {
    for (const id of umbrella.classes) if (!classes.has(id)) problems.push(`umbrellaAllergies.${index}: allergy class "${id}" is not in "allergyClasses"`);
  });
  formulary.crossReactivity.forEach((rule, index) => {
    for (const id of [rule.allergy, rule.excludes]) if (!classes.has(id)) problems.push(`crossReactivity.${index}: allergy class "${id}" is not in "allergyClasses"`);
  });
  formulary.classRules.forEach((rule, index) => {
    if (!classes.has(rule.class)) problems.push(`classRules.${index}: allergy class "${rule.class}" is not in "allergyClasses"`);
  });
  return problems;
}

export function parseFormulary(raw: unknown, file = 'formulary'): Formulary {
  const parsed = FormularyFile.safeParse(raw);
  if (!parsed.success) throw invalid(file, formatIssues(parsed.error.issues));
  const problems = referenceProblems(parsed.data);
  if (problems.length) throw invalid(file, problems);
  return parsed.data;
}

export function loadFormulary(file = defaultFormularyPath()): Formulary {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    throw new ClinAgentError('CONFIG_INVALID', `Cannot read the formulary ${file}: ${errorMessage(error)}. Restore data/consult/formulary.json from the package.`, { file }, { cause: error });
  }
  return parseFormulary(raw, file);
}

let shipped: Formulary | undefined;

/** The shipped formulary, read once. */
export function shippedFormulary(): Formulary {
  shipped ??= loadFormulary();
  return shipped;
}
