import type { RecordValue, TrialRecord } from '../../store/types.js';
import { quote, type ImportWarning } from '../problems.js';
import { validateValue } from '../validate-value.js';
import type { OdmMetadata } from './odm-metadata.js';
import { elementPath, type OdmProblem } from './odm-problems.js';
import type { OdmEventData } from './read-odm-xml.js';

// ODM's boolean DataType writes true/false; REDCap's true-false fields store 1/0.
const BOOLEAN_CODES: Record<string, string> = { true: '1', false: '0' };
const STATUS_CODES = ['0', '1', '2'];

/**
 * Turns ClinicalData into records as the CSV import builds them from the flat export: one record per subject
 * and event, with every field of the dictionary (null where the ODM has no ItemData, as a blank cell), each
 * value checked and converted by the same rules. Every problem is located by its ItemData (or StudyEventData)
 * element; values outside their validation bounds are kept and listed as warnings.
 */
export function readOdmClinicalData(
  events: ReadonlyArray<OdmEventData>,
  metadata: OdmMetadata,
  source: string,
): { value: TrialRecord[]; problems: OdmProblem[]; warnings: ImportWarning[] } {
  const problems: OdmProblem[] = [];
  const warnings: ImportWarning[] = [];
  const records = new Map<string, TrialRecord & { lines: Map<string, number> }>();
  const eventList = [...metadata.eventNames.keys()].join(', ');

  for (const eventData of events) {
    const subjectPath = elementPath('SubjectData', 'SubjectKey', eventData.subjectKey);
    const eventPath = eventData.isWithoutEvent ? subjectPath : `${subjectPath}/${elementPath('StudyEventData', 'StudyEventOID', eventData.studyEventOID)}`;
    const report = (line: number, element: string, field: string, value: string, problem: string) => problems.push({ source, line, element, field, value, problem });
    const before = problems.length;
    const recordId = eventData.subjectKey.trim();
    if (!recordId) report(eventData.line, eventPath, 'SubjectKey', '', 'the SubjectKey is empty; every SubjectData needs the subject\'s key (the record id)');
    // A classic REDCap project's data sits in one implicit event, which its metadata need not define.
    const eventName = !metadata.isLongitudinal ? '' : metadata.eventNames.get(eventData.studyEventOID) ?? (eventData.uniqueEventName !== undefined && metadata.events.some((event) => event.eventName === eventData.uniqueEventName) ? eventData.uniqueEventName : undefined);
    if (eventName === undefined && eventData.isWithoutEvent) {
      report(eventData.line, eventPath, 'StudyEventData', '', `the subject's forms are not inside a StudyEventData, but the metadata defines events (${eventList}), so they cannot be placed at one; export the project again with its events (REDCap: a longitudinal project's ODM export has a StudyEventData per event)`);
    } else if (eventName === undefined) {
      report(eventData.line, eventPath, 'StudyEventOID', eventData.studyEventOID, `${quote(eventData.studyEventOID)} is not the OID of any StudyEventDef in the metadata (${eventList || 'none defined'}); export the metadata and the data of the same project together`);
    }
    if (eventData.repeatKey) {
      report(eventData.line, eventPath, 'StudyEventRepeatKey', eventData.repeatKey, 'repeating events are not supported yet; export without repeats, one StudyEventData per subject and event');
    }
    if (problems.length > before) continue;

    const key = JSON.stringify([recordId, eventName]);
    let record = records.get(key);
    if (!record) {
      record = { recordId, eventName: eventName!, site: eventData.site.trim(), data: Object.fromEntries(metadata.columns.map((column) => [column, null])), lines: new Map() };
      records.set(key, record);
    }
    for (const item of eventData.items) {
      const itemPath = `${elementPath('ItemData', 'ItemOID', item.itemOID)} in ${eventPath}`;
      const target = metadata.items.get(item.itemOID);
      const raw = item.value ?? '';
      if (!target) {
        report(item.line, itemPath, item.itemOID, raw, `${quote(item.itemOID)} is not the OID of any ItemDef on a form of the metadata; export the metadata and the data of the same project together, or add the item`);
        continue;
      }
      if (item.repeatKey) {
        report(item.line, itemPath, item.itemOID, raw, 'repeating forms and item groups are not supported yet; export without repeats, one FormData per form and event');
        continue;
      }
      if (target.kind === 'recordId') {
        if (raw.trim() && raw.trim() !== recordId) report(item.line, itemPath, item.itemOID, raw, `the record id ${quote(raw.trim())} differs from the SubjectKey ${quote(recordId)}; export the project again`);
        continue;
      }
      const column = target.kind === 'field' ? target.field.fieldName : target.column;
      const firstLine = record.lines.get(column);
      let value: RecordValue;
      if (target.kind === 'field') {
        const text = target.field.fieldType === 'truefalse' ? (BOOLEAN_CODES[raw.trim().toLowerCase()] ?? raw) : raw;
        const checked = validateValue(target.field, text);
        if ('problem' in checked) {
          report(item.line, itemPath, column, raw, checked.problem);
          continue;
        }
        value = checked.value;
        if (checked.outOfRange && value !== null) {
          const { side, bound } = checked.outOfRange;
          warnings.push({
            line: item.line,
            recordId,
            event: eventName!,
            field: column,
            value,
            min: target.field.validationMin,
            max: target.field.validationMax,
            message: `${source} line ${item.line}, ${itemPath}, field ${column}: ${String(value)} is ${side} the validation ${side === 'below' ? 'minimum' : 'maximum'} ${bound}; imported, QC will report it`,
          });
        }
      } else {
        const text = raw.trim();
        const allowed = target.kind === 'checkbox' ? ['0', '1'] : STATUS_CODES;
        if (text !== '' && !allowed.includes(text)) {
          report(item.line, itemPath, column, raw, `${quote(text)} is not one of ${allowed.join(', ')} (${target.kind === 'checkbox' ? 'unchecked or checked' : 'incomplete, unverified or complete'})`);
          continue;
        }
        value = text === '' ? null : text;
      }
      if (firstLine !== undefined && record.data[column] !== value) {
        report(item.line, itemPath, column, raw, `the subject already has ${quote(String(record.data[column]))} for this field at this event (line ${firstLine}); each item must have one value per subject and event`);
        continue;
      }
      record.lines.set(column, item.line);
      record.data[column] = value;
    }
  }
  const value = [...records.values()].map(({ lines: _lines, ...record }) => record);
  return { value, problems, warnings };
}
