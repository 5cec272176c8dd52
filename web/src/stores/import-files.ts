import type { ImportFiles } from '../api/trial-api';

/** The two kinds of export a project imports: REDCap's CSV files, or one CDISC ODM 1.3 XML file. */
export type ImportFormat = 'csv' | 'odm';
export type ImportPart = keyof ImportFiles;

/** The file pickers of each format, required ones first. */
export const FORMAT_PARTS: Record<ImportFormat, Array<{ part: ImportPart; isRequired: boolean; accept: string }>> = {
  csv: [
    { part: 'dictionary', isRequired: true, accept: '.csv,text/csv' },
    { part: 'records', isRequired: true, accept: '.csv,text/csv' },
    { part: 'events', isRequired: false, accept: '.csv,text/csv' },
    { part: 'arms', isRequired: false, accept: '.csv,text/csv' },
  ],
  odm: [{ part: 'odm', isRequired: true, accept: '.xml,application/xml,text/xml' }],
};

/** The files of `format` only: a file picked under the other format is never sent with these. */
export function filesOf(format: ImportFormat, files: ImportFiles): ImportFiles {
  return Object.fromEntries(FORMAT_PARTS[format].flatMap(({ part }) => (files[part] ? [[part, files[part]]] : [])));
}

/** The required files of `format` not chosen yet; the preview can be asked for when there are none. */
export function missingParts(format: ImportFormat, files: ImportFiles): ImportPart[] {
  return FORMAT_PARTS[format].filter(({ part, isRequired }) => isRequired && !files[part]).map(({ part }) => part);
}
