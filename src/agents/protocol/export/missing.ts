import { getPath, isPresent } from '../../../runtime/staged/context-paths.js';

/**
 * The fields a protocol cannot go without, per context field (the stage that fills it), with the words the
 * export uses for them. Keyed by context field rather than stage id: an admin may rename a stage, but its data
 * stays where it is.
 */
const REQUIRED_FIELDS: Readonly<Record<string, ReadonlyArray<{ path: string; label: string }>>> = {
  scientificQuestion: [{ path: 'question', label: 'research question' }],
  pico: [
    { path: 'population', label: 'population' },
    { path: 'intervention', label: 'intervention' },
    { path: 'comparison', label: 'comparison' },
    { path: 'outcome', label: 'outcome' },
  ],
  studyDesign: [{ path: 'type', label: 'design type' }],
  sampleSize: [
    { path: 'method', label: 'method' },
    { path: 'total', label: 'total sample size' },
  ],
  endpoints: [{ path: 'primary.name', label: 'primary endpoint' }],
};

/** The labels of the required fields `data` (one context field's value) does not fill yet, in order. */
export function missingFields(contextField: string, data: unknown): string[] {
  return (REQUIRED_FIELDS[contextField] ?? []).filter(({ path }) => !isPresent(getPath(data, path))).map(({ label }) => label);
}
