import { describe, expect, it } from 'vitest';
import { readOdmSchedule } from './odm-schedule.js';
import { readOdmXml } from './read-odm-xml.js';

const versionOf = (definitions: string) => {
  const document = readOdmXml(`<ODM xmlns:redcap="https://projectredcap.org"><Study OID="S"><MetaDataVersion OID="M">\n${definitions}\n</MetaDataVersion></Study></ODM>`, 's.xml');
  return document.value.studies[0]!.children[0]!;
};

describe('readOdmSchedule', () => {
  it('reads REDCap arms, day offsets and windows', () => {
    const schedule = readOdmSchedule(
      versionOf(`<StudyEventDef OID="Event.v1_arm_2" Name="Visit 1" redcap:UniqueEventName="v1_arm_2" redcap:ArmNum="2" redcap:ArmName="Placebo" redcap:DayOffset="14.00" redcap:OffsetMin="2" redcap:OffsetMax="3"/>
<StudyEventDef OID="Event.v1_arm_1" Name="Visit 1" redcap:UniqueEventName="v1_arm_1" redcap:ArmNum="1" redcap:ArmName="Active" redcap:DayOffset="14"/>`),
      true,
      's.xml',
    );
    expect(schedule.problems).toEqual([]);
    expect(schedule.value.events).toEqual([
      { eventName: 'v1_arm_2', label: 'Visit 1', dayOffset: 14, windowBefore: 2, windowAfter: 3, armNum: 2 },
      { eventName: 'v1_arm_1', label: 'Visit 1', dayOffset: 14, windowBefore: 0, windowAfter: 0, armNum: 1 },
    ]);
    expect(schedule.value.arms).toEqual([{ armNum: 1, name: 'Active' }, { armNum: 2, name: 'Placebo' }]);
  });

  it('names a generic event from its OID when its Name is taken or unusable', () => {
    const schedule = readOdmSchedule(versionOf('<StudyEventDef OID="SE_V1" Name="Visit"/>\n<StudyEventDef OID="SE_V2" Name="Visit"/>\n<StudyEventDef OID="SE_V3" Name="3rd visit"/>'), false, 's.xml');
    expect(schedule.value.events.map((event) => [event.eventName, event.label])).toEqual([['visit', 'Visit'], ['se_v2', 'Visit'], ['se_v3', '3rd visit']]);
  });

  it('reports a window that is not a whole number of days, and a negative one, by element', () => {
    const schedule = readOdmSchedule(versionOf('<StudyEventDef OID="Event.a" Name="A" redcap:UniqueEventName="a" redcap:OffsetMin="1.5" redcap:OffsetMax="-2" redcap:ArmNum="0"/>'), true, 's.xml');
    expect(schedule.problems.map(({ line, element, field, value }) => ({ line, element, field, value }))).toEqual([
      { line: 2, element: 'StudyEventDef[@OID="Event.a"]', field: 'redcap:OffsetMin', value: '1.5' },
      { line: 2, element: 'StudyEventDef[@OID="Event.a"]', field: 'redcap:OffsetMax', value: '-2' },
      { line: 2, element: 'StudyEventDef[@OID="Event.a"]', field: 'redcap:ArmNum', value: '0' },
    ]);
    expect(schedule.value.events).toEqual([]);
  });
});
