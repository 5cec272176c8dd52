import type { OdmElement } from './read-odm-xml.js';

// REDCap's rule for variable names, which QC rules and JSON Logic paths rely on (as in the dictionary import).
export const FIELD_NAME = /^[a-z][a-z0-9_]*$/;

/** The child elements with this (namespace-free) name, in file order. */
export function children(element: OdmElement | undefined, name: string): OdmElement[] {
  return element ? element.children.filter((child) => child.name === name) : [];
}

/** A name usable as a REDCap variable or event name: "Age at consent" gives "age_at_consent", "I.AGE" gives "i_age". */
export function slug(text: string | undefined): string | undefined {
  const name = (text ?? '').toLowerCase().replace(/[^a-z0-9]+/g, '_').replace(/^_+|_+$/g, '');
  return FIELD_NAME.test(name) ? name : undefined;
}
