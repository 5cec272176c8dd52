import { SaxesParser } from 'saxes';
import { ClinAgentError } from '../../../core/errors.js';
import { importTooLarge, IMPORT_LIMITS } from '../import-limits.js';
import type { OdmProblem } from './odm-problems.js';

/** An element of the study metadata, with its XML line for problems. Namespace prefixes are dropped from names. */
export interface OdmElement {
  name: string;
  /** Attributes as written, REDCap's keeping their prefix ("redcap:Variable"). */
  attributes: Record<string, string>;
  children: OdmElement[];
  text: string;
  line: number;
}

/** One ItemData (or typed ItemDataInteger...) of the clinical data, with where it sits. */
export interface OdmItemValue {
  itemOID: string;
  formOID: string;
  itemGroupOID: string;
  /** The value; null for IsNull="Yes". */
  value: string | null;
  /** Repeat keys above 1 of the form or item group, which the import cannot place yet. */
  repeatKey?: string;
  /**
   * An upload (ItemDataBase64Binary): `value` is its file name (REDCap's redcap:DocName), the content is never
   * kept, as REDCap's CSV export of the same project gives the name only.
   */
  isFile?: boolean;
  line: number;
}

/** One StudyEventData of one SubjectData: a record at an event. */
export interface OdmEventData {
  subjectKey: string;
  /** REDCap's data access group, or the ODM SiteRef; '' when neither is given. */
  site: string;
  studyEventOID: string;
  /** StudyEventRepeatKey when above 1. */
  repeatKey?: string;
  /** REDCap's redcap:UniqueEventName, when the export has it. */
  uniqueEventName?: string;
  /**
   * FormData written straight in SubjectData, with no StudyEventData: how REDCap (7 and later) exports a classic,
   * non-longitudinal project. studyEventOID is then ''.
   */
  isWithoutEvent?: boolean;
  items: OdmItemValue[];
  line: number;
}

export interface OdmDocument {
  /** The ODM root; its attributes name the source system (SourceSystem="REDCap"). */
  root: Pick<OdmElement, 'name' | 'attributes' | 'line'>;
  /** Study elements with their whole metadata. */
  studies: OdmElement[];
  /** MetaDataVersionOID of the first ClinicalData, to pick the matching metadata. */
  metaDataVersionOID?: string;
  events: OdmEventData[];
  /** SubjectData elements of the file, each with its key and line, for saying why a file gave no record. */
  subjects: Array<{ key: string; line: number }>;
}

/** The value of an uploaded file the export gives no name for. */
export const UNNAMED_FILE = '(file without a name)';

/**
 * ODM files are whole exports of a trial; this bounds what one import holds in memory. Uploads are bounded
 * separately (UPLOAD_MAX_BYTES); this guards callers that pass text directly.
 */
export const MAX_ODM_CHARS = 256 * 1024 * 1024;
const CHUNK_CHARS = 1024 * 1024;

/**
 * Reads ODM 1.3 XML with a streaming parser: the study metadata is kept as a small tree, the clinical data
 * as flat item values, so a large export is not held twice. A DOCTYPE is refused outright: ODM never needs
 * one, and its entity declarations are how XML files read local files (XXE) or expand into gigabytes
 * (billion laughs). The parser expands no entities beyond XML's five predefined ones and character references.
 */
export function readOdmXml(text: string, source: string): { value: OdmDocument; problems: OdmProblem[] } {
  if (text.length > MAX_ODM_CHARS) {
    throw new ClinAgentError('VALIDATION_FAILED', `${source} is ${Math.ceil(text.length / 1024 / 1024)} MB of XML, more than the ${MAX_ODM_CHARS / 1024 / 1024} MB one ODM import reads. Export the clinical data in parts (by site or by record range) and import each part.`, { source, limit: MAX_ODM_CHARS });
  }
  const document: OdmDocument = { root: { name: '', attributes: {}, line: 0 }, studies: [], events: [], subjects: [] };
  const problems: OdmProblem[] = [];
  const parser = new SaxesParser({ position: true });
  // Open elements, outermost first; `element` is set for those kept in the metadata tree.
  const open: Array<{ name: string; attributes: Record<string, string>; element?: OdmElement; text: string }> = [];
  let subject: { key: string; site: string } | undefined;
  let event: OdmEventData | undefined;
  let form: { oid: string; repeatKey?: string } | undefined;
  let group: { oid: string; repeatKey?: string } | undefined;
  let item: OdmItemValue | undefined;
  let elements = 0;

  parser.on('doctype', () => {
    // The event comes at the declaration's end; the data manager looks for where it starts.
    const start = Math.max(0, text.lastIndexOf('<!DOCTYPE', parser.position));
    const line = text.slice(0, start).split('\n').length;
    throw new ClinAgentError(
      'VALIDATION_FAILED',
      `${source} has a DOCTYPE declaration (line ${line}), which an ODM file never needs and which can make an XML reader open local files or expand entities without end; it was not read. Export the file again from the EDC, or delete the <!DOCTYPE ...> declaration, then import it again.`,
      { source, line },
    );
  });
  parser.on('opentag', (tag) => {
    // Counted as they come, so a file of millions of empty elements is refused before they are all held.
    elements += 1;
    if (elements > IMPORT_LIMITS.odmElements) throw importTooLarge('odmElements', source);
    const name = localName(tag.name);
    const attributes = tag.attributes as Record<string, string>;
    const line = parser.line;
    const parent = open.at(-1);
    const entry: (typeof open)[number] = { name, attributes, text: '' };
    if (!parent) {
      document.root = { name, attributes, line };
    } else if (name === 'Study' && parent.name === 'ODM') {
      entry.element = { name, attributes, children: [], text: '', line };
      document.studies.push(entry.element);
    } else if (parent.element) {
      entry.element = { name, attributes, children: [], text: '', line };
      parent.element.children.push(entry.element);
    } else if (name === 'ClinicalData') {
      document.metaDataVersionOID ??= attributes.MetaDataVersionOID;
    } else if (name === 'SubjectData') {
      // The SubjectKey is the record id, in every EDC: OpenClinica's OpenClinica:StudySubjectID is the label site
      // staff see, which may change, and is not what its ODM, its API or its audit log identify the subject by.
      subject = { key: attributes.SubjectKey ?? '', site: attributes['redcap:DataAccessGroup'] ?? '' };
      document.subjects.push({ key: subject.key, line });
    } else if (name === 'SiteRef' && subject && parent.name === 'SubjectData') {
      subject.site ||= attributes.LocationOID ?? '';
    } else if (name === 'StudyEventData' && subject) {
      // SiteRef comes before the events in SubjectData, so the subject's site is known here.
      event = { subjectKey: subject.key, site: subject.site, studyEventOID: attributes.StudyEventOID ?? '', items: [], line };
      const repeatKey = aboveOne(attributes.StudyEventRepeatKey);
      if (repeatKey) event.repeatKey = repeatKey;
      const unique = attributes['redcap:UniqueEventName'];
      if (unique !== undefined) event.uniqueEventName = unique;
      document.events.push(event);
    } else if (name === 'FormData' && (event || (subject && parent.name === 'SubjectData'))) {
      if (!event && subject) {
        // A classic REDCap project: the subject's forms sit in SubjectData itself, all in one implicit event.
        event = { subjectKey: subject.key, site: subject.site, studyEventOID: '', isWithoutEvent: true, items: [], line };
        document.events.push(event);
      }
      form = { oid: attributes.FormOID ?? '', repeatKey: aboveOne(attributes.FormRepeatKey) };
    } else if (name === 'ItemGroupData' && form) {
      group = { oid: attributes.ItemGroupOID ?? '', repeatKey: aboveOne(attributes.ItemGroupRepeatKey) };
    } else if (name.startsWith('ItemData') && event && form && group) {
      // ItemData carries its value in Value; the typed ItemDataInteger, ItemDataDate... of ODM 1.3 in their text.
      const isNull = attributes.IsNull === 'Yes';
      item = { itemOID: attributes.ItemOID ?? '', formOID: form.oid, itemGroupOID: group.oid, value: isNull ? null : (attributes.Value ?? null), line };
      if (name === 'ItemDataBase64Binary') {
        // An upload (a signed consent form): its name, never its base64 content, which is not even held. A file the
        // export does not name is still there: an empty value would read as "no file" to every rule.
        item.isFile = true;
        item.value = isNull ? null : (attributes['redcap:DocName'] || attributes['OpenClinica:FileName'] || UNNAMED_FILE);
      }
      const repeatKey = form.repeatKey ?? group.repeatKey;
      if (repeatKey) item.repeatKey = repeatKey;
      event.items.push(item);
    }
    open.push(entry);
  });
  parser.on('text', (chunk) => appendText(chunk));
  parser.on('cdata', (chunk) => appendText(chunk));
  parser.on('closetag', () => {
    const entry = open.pop();
    if (!entry) return;
    if (entry.element) entry.element.text = entry.element.text.trim();
    if (entry.name === 'SubjectData') {
      subject = undefined;
      event = undefined;
    } else if (entry.name === 'StudyEventData') event = undefined;
    else if (entry.name === 'FormData') form = undefined;
    else if (entry.name === 'ItemGroupData') group = undefined;
    else if (entry.name.startsWith('ItemData') && item) {
      if (entry.name !== 'ItemData' && !item.isFile && item.value === null && entry.attributes.IsNull !== 'Yes') item.value = entry.text;
      item = undefined;
    }
  });

  function appendText(chunk: string): void {
    const entry = open.at(-1);
    if (!entry) return;
    if (entry.element) entry.element.text += chunk;
    else if (item && !item.isFile && entry.name.startsWith('ItemData')) entry.text += chunk;
  }

  try {
    for (let offset = 0; offset < text.length; offset += CHUNK_CHARS) parser.write(text.slice(offset, offset + CHUNK_CHARS));
    parser.close();
  } catch (error) {
    if (error instanceof ClinAgentError) throw error;
    const message = error instanceof Error ? error.message.replace(/^[^:]*:\d+:\d+: /, '') : String(error);
    problems.push({ source, line: parser.line, element: '(file)', field: '(file)', value: '', problem: `the file is not well-formed XML (${message}); export it again from the EDC, or fix the XML on this line` });
    return { value: document, problems };
  }
  if (document.root.name !== 'ODM') {
    problems.push({ source, line: document.root.line || 1, element: document.root.name || '(file)', field: '(file)', value: document.root.name, problem: `the root element is ${document.root.name ? `<${document.root.name}>` : 'missing'}, not <ODM>; export the project as CDISC ODM 1.3 XML (metadata and data)` });
  }
  return { value: document, problems };
}

function localName(name: string): string {
  const colon = name.indexOf(':');
  return colon < 0 ? name : name.slice(colon + 1);
}

/** A repeat key that is not the first (or only) occurrence. */
function aboveOne(key: string | undefined): string | undefined {
  return key !== undefined && key.trim() !== '' && key.trim() !== '1' ? key.trim() : undefined;
}
