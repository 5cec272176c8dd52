import type { TrialEvent } from '../../store/types.js';
import { quote } from '../problems.js';
import { children, slug } from './odm-elements.js';
import type { OdmMetadata } from './odm-metadata.js';
import { elementPath, type OdmProblem } from './odm-problems.js';
import type { OdmElement } from './read-odm-xml.js';

// REDCap stores offsets as decimals, but visit windows in protocols are whole days (as in the events import).
const WHOLE_NUMBER = /^[-+]?\d+(\.0*)?$/;

/**
 * The visit schedule from StudyEventDefs: REDCap's unique event names, arms, day offsets and windows when the
 * export has them; otherwise names from StudyEventDef Name (or OID), day 0 without a window, one arm.
 */
export function readOdmSchedule(version: OdmElement, isRedcap: boolean, source: string): { value: Pick<OdmMetadata, 'events' | 'arms' | 'eventNames' | 'isLongitudinal'>; problems: OdmProblem[] } {
  const problems: OdmProblem[] = [];
  const definitions = children(version, 'StudyEventDef');
  // The Protocol's StudyEventRefs give the schedule's order; events it leaves out follow in file order.
  const order = new Map<string, number>();
  for (const [index, ref] of children(children(version, 'Protocol')[0], 'StudyEventRef').entries()) {
    order.set(ref.attributes.StudyEventOID ?? '', Number(ref.attributes.OrderNumber ?? index + 1));
  }
  const ordered = definitions.map((definition, index) => ({ definition, rank: order.get(definition.attributes.OID ?? '') ?? definitions.length + index })).sort((a, b) => a.rank - b.rank).map((entry) => entry.definition);
  const eventNames = new Map<string, string>();
  // A REDCap export of a classic project has no unique event names: its records have no event.
  const isLongitudinal = !isRedcap || definitions.some((definition) => definition.attributes['redcap:UniqueEventName'] !== undefined);
  if (!isLongitudinal) {
    for (const definition of definitions) eventNames.set(definition.attributes.OID ?? '', '');
    return { value: { events: [], eventNames, isLongitudinal }, problems };
  }
  const events: TrialEvent[] = [];
  const arms = new Map<number, string>();
  for (const definition of ordered) {
    const { attributes } = definition;
    const oid = attributes.OID ?? '';
    const path = elementPath('StudyEventDef', 'OID', oid);
    const report = (field: string, value: string, problem: string) => problems.push({ source, line: definition.line, element: path, field, value, problem });
    const taken = new Set(events.map((event) => event.eventName));
    const fromName = slug(attributes.Name);
    const eventName = attributes['redcap:UniqueEventName'] ?? (fromName && !taken.has(fromName) ? fromName : slug(oid));
    if (!eventName) {
      report('OID', oid, 'the event has neither a Name nor an OID that can be an event name; give it a Name');
      continue;
    }
    if (taken.has(eventName)) {
      report('OID', oid, `the event name ${quote(eventName)} is already used by another StudyEventDef; event names must be unique`);
      continue;
    }
    const before = problems.length;
    const days = (attribute: string, isSigned: boolean): number => {
      const text = (attributes[attribute] ?? '').trim();
      if (!text) return 0;
      if (!WHOLE_NUMBER.test(text)) {
        report(attribute, text, `${quote(text)} is not a whole number of days`);
        return 0;
      }
      if (!isSigned && Number(text) < 0) report(attribute, text, `${quote(text)} is negative; a window is the number of days allowed before or after the target day`);
      return Number(text);
    };
    const dayOffset = days('redcap:DayOffset', true);
    const windowBefore = days('redcap:OffsetMin', false);
    const windowAfter = days('redcap:OffsetMax', false);
    const armText = attributes['redcap:ArmNum'];
    let armNum = 1;
    if (armText !== undefined) {
      if (!/^\d+$/.test(armText) || Number(armText) < 1) report('redcap:ArmNum', armText, `${quote(armText)} is not an arm number (1, 2, ...)`);
      else {
        armNum = Number(armText);
        if (!arms.has(armNum)) arms.set(armNum, attributes['redcap:ArmName'] || `Arm ${armNum}`);
      }
    }
    if (problems.length > before) continue;
    eventNames.set(oid, eventName);
    events.push({ eventName, label: attributes.Name || eventName, dayOffset, windowBefore, windowAfter, armNum });
  }
  const armList = arms.size > 0 ? [...arms].sort(([a], [b]) => a - b).map(([armNum, name]) => ({ armNum, name })) : undefined;
  return { value: { events, ...(armList ? { arms: armList } : {}), eventNames, isLongitudinal }, problems };
}
