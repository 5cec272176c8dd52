import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { packageRoot } from '../../../core/paths.js';
import { readOdmClinicalData } from './odm-clinical-data.js';
import { readOdmMetadata } from './odm-metadata.js';
import { readOdmXml } from './read-odm-xml.js';

const openClinica = readFileSync(path.join(packageRoot(), 'test-data', 'trial', 'odm', 'openclinica.odm.xml'), 'utf8');

function recordsOf(xml: string) {
  const document = readOdmXml(xml, 'oc.xml');
  expect(document.problems).toEqual([]);
  const metadata = readOdmMetadata(document.value, 'oc.xml');
  expect(metadata.problems).toEqual([]);
  return readOdmClinicalData(document.value.events, metadata.value, 'oc.xml');
}

const subject = (key: string, event: string, items: string, extra = '') => `
    <SubjectData SubjectKey="${key}">
      <StudyEventData StudyEventOID="${event}"${extra}><FormData FormOID="F_VITALS_V1"><ItemGroupData ItemGroupOID="IG_VITAL_UNGROUPED">${items}</ItemGroupData></FormData></StudyEventData>
    </SubjectData>`;
const withClinicalData = (subjects: string) => openClinica.replace(/(<ClinicalData[^>]*>)[\s\S]*<\/ClinicalData>/, `$1${subjects}</ClinicalData>`);

describe('readOdmClinicalData', () => {
  it('makes one record per subject and event with the site, every field, and values converted as from CSV', () => {
    const records = recordsOf(openClinica);
    expect(records.problems).toEqual([]);
    expect(records.value).toEqual([{ recordId: 'SS_001', eventName: 'baseline_visit', site: 'S_DIAB01_AMS', data: { visdat: '2024-04-02', hr: 250, body_temperature: null, position: 'SUP', fasting: '1' } }]);
    expect(records.warnings).toEqual([
      expect.objectContaining({ recordId: 'SS_001', event: 'baseline_visit', field: 'hr', value: 250, min: '30', max: '220', message: expect.stringMatching(/^oc\.xml line \d+, ItemData\[@ItemOID="I_VITAL_HR"\] in SubjectData\[@SubjectKey="SS_001"\]\/StudyEventData\[@StudyEventOID="SE_BASELINE"\], field hr: 250 is above the validation maximum 220; imported/) }),
    ]);
  });

  it('merges a subject\'s event split over two SubjectData elements', () => {
    const records = recordsOf(withClinicalData(subject('SS_002', 'SE_FOLLOWUP', '<ItemData ItemOID="I_VITAL_HR" Value="61"/>') + subject('SS_002', 'SE_FOLLOWUP', '<ItemData ItemOID="I_VITAL_POS" Value="SIT"/>')));
    expect(records.problems).toEqual([]);
    expect(records.value).toEqual([{ recordId: 'SS_002', eventName: 'follow_up', site: '', data: { visdat: null, hr: 61, body_temperature: null, position: 'SIT', fasting: null } }]);
  });

  it('reports an unknown event, a repeated event, a repeated item group and a conflicting second value by element', () => {
    const records = recordsOf(
      withClinicalData(
        subject('SS_001', 'SE_UNSCHEDULED', '<ItemData ItemOID="I_VITAL_HR" Value="60"/>') +
          subject('SS_002', 'SE_BASELINE', '<ItemData ItemOID="I_VITAL_HR" Value="60"/>', ' StudyEventRepeatKey="2"') +
          subject('SS_003', 'SE_BASELINE', '<ItemData ItemOID="I_VITAL_HR" Value="60"/>') +
          subject('SS_003', 'SE_BASELINE', '<ItemData ItemOID="I_VITAL_HR" Value="61"/>') +
          subject('SS_004', 'SE_BASELINE', '<ItemData ItemOID="I_VITAL_HR" Value="60"/>').replace('ItemGroupOID="IG_VITAL_UNGROUPED"', 'ItemGroupOID="IG_VITAL_UNGROUPED" ItemGroupRepeatKey="2"'),
      ),
    );
    const event = (key: string) => `SubjectData[@SubjectKey="${key}"]/StudyEventData[@StudyEventOID="${key === 'SS_001' ? 'SE_UNSCHEDULED' : 'SE_BASELINE'}"]`;
    expect(records.problems.map(({ element, field, value }) => ({ element, field, value }))).toEqual([
      { element: event('SS_001'), field: 'StudyEventOID', value: 'SE_UNSCHEDULED' },
      { element: event('SS_002'), field: 'StudyEventRepeatKey', value: '2' },
      { element: `ItemData[@ItemOID="I_VITAL_HR"] in ${event('SS_003')}`, field: 'hr', value: '61' },
      { element: `ItemData[@ItemOID="I_VITAL_HR"] in ${event('SS_004')}`, field: 'I_VITAL_HR', value: '60' },
    ]);
    expect(records.problems[0]!.problem).toContain('(SE_BASELINE, SE_FOLLOWUP)');
    expect(records.problems[2]!.problem).toMatch(/already has "60" for this field at this event \(line \d+\)/);
    expect(records.problems[3]!.problem).toMatch(/^repeating forms and item groups are not supported yet/);
  });

  it('refuses a record id item that differs from its SubjectKey', () => {
    const document = readOdmXml(`<ODM xmlns:redcap="https://projectredcap.org" SourceSystem="REDCap"><Study OID="P"><MetaDataVersion OID="M" redcap:RecordIdField="study_id">
      <FormDef OID="Form.enrol" Name="Enrolment" redcap:FormName="enrol"><ItemGroupRef ItemGroupOID="g"/></FormDef>
      <ItemGroupDef OID="g" Name="Enrolment"><ItemRef ItemOID="study_id"/><ItemRef ItemOID="age"/></ItemGroupDef>
      <ItemDef OID="study_id" Name="study_id" DataType="text" redcap:Variable="study_id" redcap:FieldType="text"/>
      <ItemDef OID="age" Name="age" DataType="integer" redcap:Variable="age" redcap:FieldType="text" redcap:TextValidationType="integer"/>
    </MetaDataVersion></Study>
    <ClinicalData><SubjectData SubjectKey="7"><StudyEventData StudyEventOID="Event.event_1_arm_1"><FormData FormOID="Form.enrol"><ItemGroupData ItemGroupOID="g"><ItemData ItemOID="study_id" Value="8"/><ItemData ItemOID="age" Value="41"/></ItemGroupData></FormData></StudyEventData></SubjectData></ClinicalData></ODM>`, 'c.xml');
    const metadata = readOdmMetadata(document.value, 'c.xml');
    // A classic project: its one event need not be defined by a StudyEventDef.
    const records = readOdmClinicalData(document.value.events, metadata.value, 'c.xml');
    expect(records.problems.map(({ element, field, value }) => ({ element, field, value }))).toEqual([
      { element: 'ItemData[@ItemOID="study_id"] in SubjectData[@SubjectKey="7"]/StudyEventData[@StudyEventOID="Event.event_1_arm_1"]', field: 'study_id', value: '8' },
    ]);
    expect(records.problems[0]!.problem).toBe('the record id "8" differs from the SubjectKey "7"; export the project again');
    const matching = readOdmClinicalData(document.value.events.map((event) => ({ ...event, items: event.items.map((item) => (item.itemOID === 'study_id' ? { ...item, value: '7' } : item)) })), metadata.value, 'c.xml');
    expect(matching).toMatchObject({ problems: [], value: [{ recordId: '7', eventName: '', site: '', data: { age: 41 } }] });
  });
});
