import type { FieldType } from '../../../core/db/schema/trial.js';
import type { TrialArm, TrialEvent, TrialField } from '../../store/types.js';
import { quote } from '../problems.js';
import { fieldTypeOf, IMPLICIT_CHOICES, parseChoices } from '../redcap-field-type.js';
import { boundOf, isValidBound } from '../validate-value.js';
import { children, FIELD_NAME, slug } from './odm-elements.js';
import { elementPath, type OdmProblem } from './odm-problems.js';
import { readOdmSchedule } from './odm-schedule.js';
import type { OdmDocument, OdmElement } from './read-odm-xml.js';

/** What an ItemOID of the clinical data fills in a record, the way a column of REDCap's CSV export would. */
export type OdmItemTarget =
  | { kind: 'recordId' }
  | { kind: 'field'; field: TrialField }
  /** One choice of a REDCap checkbox ("gym___1"), stored under that column name as 0 or 1. */
  | { kind: 'checkbox'; column: string }
  /** REDCap's "<form>_complete" status, 0, 1 or 2. */
  | { kind: 'status'; column: string };

export interface OdmMetadata {
  /** Dictionary order; the first field is the record id, as in every REDCap project. */
  fields: TrialField[];
  /** The schedule; empty for a classic REDCap project. */
  events: TrialEvent[];
  /** REDCap's arms when the export names them; otherwise the stored arms are kept. */
  arms?: TrialArm[];
  items: Map<string, OdmItemTarget>;
  /** The record's data keys in dictionary order, as the columns of the CSV export. */
  columns: string[];
  /** StudyEventOID to event name; '' for every event of a classic project. */
  eventNames: Map<string, string>;
  isLongitudinal: boolean;
}

const CHOICE_TYPES = new Set<FieldType>(['dropdown', 'radio', 'checkbox']);
// REDCap's internal names for two field types, which some of its ODM exports carry.
const REDCAP_INTERNAL_TYPES: Record<string, string> = { select: 'dropdown', textarea: 'notes' };
// ODM 1.3 DataType for a field without a code list.
const DATA_TYPES: Record<string, FieldType> = { integer: 'integer', float: 'number', double: 'number', decimal: 'number', date: 'date', datetime: 'datetime', boolean: 'truefalse', base64Binary: 'file' };

/**
 * Builds the dictionary, schedule and arms from Study/MetaDataVersion, as the CSV import builds them from the
 * data dictionary, events and arms files. REDCap's extensions (redcap:Variable, redcap:FieldType,
 * redcap:UniqueEventName, checkbox ItemDefs "field___1") give exactly REDCap's names; without them (OpenClinica,
 * Castor) field names come from ItemDef Name or OID and events from StudyEventDef Name or OID.
 */
export function readOdmMetadata(document: OdmDocument, source: string): { value: OdmMetadata; problems: OdmProblem[] } {
  const problems: OdmProblem[] = [];
  const empty: OdmMetadata = { fields: [], events: [], items: new Map(), columns: [], eventNames: new Map(), isLongitudinal: false };
  const study = document.studies[0];
  const versions = study ? children(study, 'MetaDataVersion') : [];
  const version = versions.find((candidate) => candidate.attributes.OID === document.metaDataVersionOID) ?? versions[0];
  if (!study || !version) {
    problems.push({ source, line: study?.line ?? document.root.line ?? 1, element: study ? 'Study' : 'ODM', field: '(file)', value: '', problem: 'the file has no Study/MetaDataVersion, so its data cannot be checked; export the metadata and the data together (in REDCap: "CDISC ODM (XML) with metadata"; in OpenClinica or Castor: the full ODM 1.3 export)' });
    return { value: empty, problems };
  }
  const report = (element: OdmElement, path: string, field: string, value: string, problem: string) => problems.push({ source, line: element.line, element: path, field, value, problem });
  const isRedcap = document.root.attributes.SourceSystem === 'REDCap' || version.children.some((child) => child.attributes['redcap:Variable'] !== undefined);
  const byOid = (name: string) => new Map(children(version, name).map((element) => [element.attributes.OID ?? '', element]));
  const itemDefs = byOid('ItemDef');
  const itemGroupDefs = byOid('ItemGroupDef');
  const codeLists = byOid('CodeList');

  const fields: TrialField[] = [];
  const items = new Map<string, OdmItemTarget>();
  const columns: string[] = [];
  const oidOfField = new Map<string, string>();
  const checkboxes = new Map<string, TrialField>();
  const recordIdName = version.attributes['redcap:RecordIdField'];

  const claim = (name: string, itemOid: string, element: OdmElement, path: string): boolean => {
    const other = oidOfField.get(name);
    if (other !== undefined && other !== itemOid) {
      report(element, path, 'Name', name, `the field name ${quote(name)} is also the name of ItemDef ${quote(other)}; field names must be unique, so rename one in the EDC`);
      return false;
    }
    oidOfField.set(name, itemOid);
    return true;
  };

  for (const formDef of children(version, 'FormDef')) {
    const formPath = elementPath('FormDef', 'OID', formDef.attributes.OID ?? '');
    const formName = formDef.attributes['redcap:FormName'] ?? slug(formDef.attributes.Name) ?? slug(formDef.attributes.OID);
    if (!formName) {
      report(formDef, formPath, 'Name', formDef.attributes.Name ?? '', 'the form has neither a Name nor an OID that can be a form name; give it a Name');
      continue;
    }
    for (const groupRef of children(formDef, 'ItemGroupRef')) {
      const groupDef = itemGroupDefs.get(groupRef.attributes.ItemGroupOID ?? '');
      if (!groupDef) {
        report(groupRef, `ItemGroupRef[@ItemGroupOID=${JSON.stringify(groupRef.attributes.ItemGroupOID ?? '')}] in ${formPath}`, 'ItemGroupOID', groupRef.attributes.ItemGroupOID ?? '', 'no ItemGroupDef has this OID; export the metadata again');
        continue;
      }
      for (const itemRef of children(groupDef, 'ItemRef')) {
        const itemOid = itemRef.attributes.ItemOID ?? '';
        const itemDef = itemDefs.get(itemOid);
        const refPath = `ItemRef[@ItemOID=${JSON.stringify(itemOid)}] in ${elementPath('ItemGroupDef', 'OID', groupDef.attributes.OID ?? '')}`;
        if (!itemDef) {
          report(itemRef, refPath, 'ItemOID', itemOid, 'no ItemDef has this OID; export the metadata again');
          continue;
        }
        // An ItemDef used on several forms (a visit date on each) is one field, placed where it first appears.
        if (items.has(itemOid)) continue;
        const path = elementPath('ItemDef', 'OID', itemOid);
        const redcapType = itemDef.attributes['redcap:FieldType'];
        const name = itemDef.attributes['redcap:Variable'] ?? slug(itemDef.attributes.Name) ?? slug(itemOid);
        if (!name || !FIELD_NAME.test(name)) {
          report(itemDef, path, 'Name', name ?? itemDef.attributes.Name ?? '', `${quote(name ?? '')} is not a valid field name (lowercase letters, digits and _, starting with a letter); rename the item in the EDC`);
          continue;
        }
        if (redcapType === 'descriptive') continue;
        if (isRedcap && name === `${formName}_complete` && !oidOfField.has(name)) {
          const column = itemDef.attributes.Name ?? name;
          items.set(itemOid, { kind: 'status', column });
          columns.push(column);
          continue;
        }
        const isRequired = itemRef.attributes.Mandatory === 'Yes' || itemDef.attributes['redcap:RequiredField'] === 'y';
        if (redcapType === 'checkbox') {
          // REDCap writes one ItemDef per choice, "gym___1", each holding 0 or 1.
          const column = itemDef.attributes.Name ?? itemOid;
          const code = column.includes('___') ? column.slice(column.lastIndexOf('___') + 3) : '';
          let field = checkboxes.get(name);
          if (!field) {
            if (!claim(name, itemOid, itemDef, path)) continue;
            const listed = itemDef.attributes['redcap:CheckboxChoices'] ?? codeListOf(itemDef, codeLists)?.attributes['redcap:CheckboxChoices'];
            const parsed = listed === undefined ? { choices: [], problems: [] } : parseChoices(listed);
            for (const problem of parsed.problems) report(itemDef, path, 'redcap:CheckboxChoices', listed ?? '', problem);
            field = { fieldName: name, formName, fieldType: 'checkbox', label: questionOf(itemDef), choices: parsed.choices, validationMin: null, validationMax: null, required: isRequired, identifier: itemDef.attributes['redcap:Identifier'] === 'y' };
            checkboxes.set(name, field);
            fields.push(field);
          }
          if (!field.choices.some((choice) => choice.code.toLowerCase() === code.toLowerCase())) field.choices.push({ code, label: code });
          items.set(itemOid, { kind: 'checkbox', column });
          columns.push(column);
          continue;
        }
        if (!claim(name, itemOid, itemDef, path)) continue;
        const field = fieldOf(itemDef, { name, formName, redcapType, isRequired, codeLists, path, report: (field, value, problem) => report(itemDef, path, field, value, problem) });
        if (!field) continue;
        fields.push(field);
        if (name === recordIdName || (isRedcap && !recordIdName && fields.length === 1)) items.set(itemOid, { kind: 'recordId' });
        else {
          items.set(itemOid, { kind: 'field', field });
          columns.push(name);
        }
      }
    }
  }
  if (fields.length === 0 && problems.length === 0) {
    problems.push({ source, line: version.line, element: elementPath('MetaDataVersion', 'OID', version.attributes.OID ?? ''), field: '(file)', value: '', problem: 'the metadata defines no items on any form; export the project with its metadata' });
  }
  if (!isRedcap && fields.length > 0) {
    // A generic ODM keeps the subject's key outside the items; the dictionary's first field holds it.
    const fieldName = oidOfField.has('record_id') ? 'subject_key' : 'record_id';
    fields.unshift({ fieldName, formName: fields[0]!.formName, fieldType: 'text', label: 'Subject key (ODM SubjectKey)', choices: [], validationMin: null, validationMax: null, required: true, identifier: false });
  } else if (isRedcap && recordIdName && fields[0]?.fieldName !== recordIdName && fields.length > 0) {
    problems.push({ source, line: version.line, element: elementPath('MetaDataVersion', 'OID', version.attributes.OID ?? ''), field: 'redcap:RecordIdField', value: recordIdName, problem: `the record id field ${quote(recordIdName)} is not the first item of the first form; export the project again from REDCap` });
  }

  const schedule = readOdmSchedule(version, isRedcap, source);
  problems.push(...schedule.problems);
  return { value: { fields, items, columns, ...schedule.value }, problems };
}

interface FieldContext {
  name: string;
  formName: string;
  redcapType: string | undefined;
  isRequired: boolean;
  codeLists: Map<string, OdmElement>;
  path: string;
  report: (field: string, value: string, problem: string) => void;
}

function fieldOf(itemDef: OdmElement, context: FieldContext): TrialField | undefined {
  const { attributes } = itemDef;
  const codeList = codeListOf(itemDef, context.codeLists);
  let fieldType: FieldType | 'skip' | undefined;
  if (context.redcapType !== undefined) {
    const type = REDCAP_INTERNAL_TYPES[context.redcapType] ?? context.redcapType;
    fieldType = fieldTypeOf(type, attributes['redcap:TextValidationType'] ?? '');
    if (fieldType === undefined) {
      context.report('redcap:FieldType', context.redcapType, `${quote(context.redcapType)} is not a REDCap field type`);
      return undefined;
    }
  } else {
    fieldType = codeList ? 'dropdown' : DATA_TYPES[attributes.DataType ?? ''] ?? 'text';
  }
  if (fieldType === 'skip') return undefined;
  if (codeList === undefined && itemDef.children.some((child) => child.name === 'CodeListRef')) {
    context.report('CodeListRef', itemDef.children.find((child) => child.name === 'CodeListRef')?.attributes.CodeListOID ?? '', 'no CodeList has this OID; export the metadata again');
    return undefined;
  }
  let choices = IMPLICIT_CHOICES[fieldType] ?? [];
  if (CHOICE_TYPES.has(fieldType)) {
    choices = codeList ? codeListChoices(codeList) : [];
    if (choices.length === 0) {
      context.report('CodeListRef', '', 'the choice field has no code list items; define its choices in the EDC');
      return undefined;
    }
  }
  const isSlider = context.redcapType === 'slider';
  const range = rangeOf(itemDef);
  const validationMin = attributes['redcap:TextValidationMin'] || range.min || (isSlider ? '0' : '');
  const validationMax = attributes['redcap:TextValidationMax'] || range.max || (isSlider ? '100' : '');
  let isValid = true;
  for (const [name, bound] of [['min', validationMin], ['max', validationMax]] as const) {
    if (bound && !isValidBound(fieldType, bound)) {
      context.report(`RangeCheck (${name})`, bound, `${quote(bound)} is not a valid bound for a ${fieldType} field`);
      isValid = false;
    }
  }
  const min = boundOf(fieldType, validationMin);
  const max = boundOf(fieldType, validationMax);
  if (min !== undefined && max !== undefined && min > max) {
    context.report('RangeCheck (min)', validationMin, `the minimum ${quote(validationMin)} is above the maximum ${quote(validationMax)}`);
    isValid = false;
  }
  if (!isValid) return undefined;
  return {
    fieldName: context.name,
    formName: context.formName,
    fieldType,
    label: questionOf(itemDef),
    choices,
    validationMin: validationMin || null,
    validationMax: validationMax || null,
    required: context.isRequired,
    identifier: attributes['redcap:Identifier'] === 'y',
  };
}

function codeListOf(itemDef: OdmElement, codeLists: Map<string, OdmElement>): OdmElement | undefined {
  const ref = children(itemDef, 'CodeListRef')[0];
  return ref ? codeLists.get(ref.attributes.CodeListOID ?? '') : undefined;
}

function codeListChoices(codeList: OdmElement): Array<{ code: string; label: string }> {
  return codeList.children
    .filter((child) => child.name === 'CodeListItem' || child.name === 'EnumeratedItem')
    .map((child) => {
      const code = child.attributes.CodedValue ?? '';
      return { code, label: translated(children(child, 'Decode')[0]) || code };
    });
}

/** The field's question text, falling back to its Name as REDCap would show a field without a label. */
function questionOf(itemDef: OdmElement): string {
  return translated(children(itemDef, 'Question')[0]) || itemDef.attributes.Name || itemDef.attributes.OID || '';
}

/** The first TranslatedText: an export in one language has one, and REDCap writes bilingual labels in one. */
function translated(element: OdmElement | undefined): string {
  return children(element, 'TranslatedText')[0]?.text ?? '';
}

/** Validation bounds from RangeChecks: GE/GT give the minimum, LE/LT the maximum. */
function rangeOf(itemDef: OdmElement): { min: string; max: string } {
  let min = '';
  let max = '';
  for (const check of children(itemDef, 'RangeCheck')) {
    const value = children(check, 'CheckValue')[0]?.text ?? '';
    const comparator = check.attributes.Comparator;
    if (comparator === 'GE' || comparator === 'GT') min = value;
    if (comparator === 'LE' || comparator === 'LT') max = value;
  }
  return { min, max };
}
