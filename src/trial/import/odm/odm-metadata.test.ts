import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { packageRoot } from '../../../core/paths.js';
import { readOdmMetadata } from './odm-metadata.js';
import { readOdmXml } from './read-odm-xml.js';

/** An OpenClinica-style ODM: no REDCap extensions, OIDs with prefixes, typed items, a site per subject. */
const openClinica = readFileSync(path.join(packageRoot(), 'test-data', 'trial', 'odm', 'openclinica.odm.xml'), 'utf8');
const metadataOf = (xml: string) => readOdmMetadata(readOdmXml(xml, 'oc.xml').value, 'oc.xml');

describe('readOdmMetadata', () => {
  it('names fields from ItemDef Name, events from StudyEventDef Name in Protocol order, and adds the record id field', () => {
    const metadata = metadataOf(openClinica);
    expect(metadata.problems).toEqual([]);
    expect(metadata.value.fields.map((field) => [field.fieldName, field.formName, field.fieldType, field.label])).toEqual([
      ['record_id', 'vital_signs_v1', 'text', 'Subject key (ODM SubjectKey)'],
      ['visdat', 'vital_signs_v1', 'date', 'Date of visit'],
      ['hr', 'vital_signs_v1', 'integer', 'Heart rate (bpm)'],
      ['body_temperature', 'vital_signs_v1', 'number', 'Body temperature'],
      ['position', 'vital_signs_v1', 'dropdown', 'POSITION'],
      ['fasting', 'vital_signs_v1', 'truefalse', 'FASTING'],
    ]);
    expect(metadata.value.fields.find((field) => field.fieldName === 'hr')).toMatchObject({ validationMin: '30', validationMax: '220', required: false });
    expect(metadata.value.fields.find((field) => field.fieldName === 'visdat')?.required).toBe(true);
    expect(metadata.value.fields.find((field) => field.fieldName === 'position')?.choices).toEqual([{ code: 'SIT', label: 'Sitting' }, { code: 'SUP', label: 'Supine' }]);
    expect(metadata.value.events).toEqual([
      { eventName: 'baseline_visit', label: 'Baseline Visit', dayOffset: 0, windowBefore: 0, windowAfter: 0, armNum: 1 },
      { eventName: 'follow_up', label: 'Follow-up', dayOffset: 0, windowBefore: 0, windowAfter: 0, armNum: 1 },
    ]);
    expect(metadata.value.arms).toBeUndefined();
    expect(metadata.value.columns).toEqual(['visdat', 'hr', 'body_temperature', 'position', 'fasting']);
  });

  it('reports metadata that cannot make a dictionary, by element', () => {
    const metadata = metadataOf(
      openClinica.replace('<CodeListRef CodeListOID="CL_POS"/>', '<CodeListRef CodeListOID="CL_MISSING"/>').replace('Name="Body temperature" DataType="float"/>', 'Name="HR" DataType="float"/>'),
    );
    expect(metadata.problems.map(({ element, field, value }) => ({ element, field, value }))).toEqual([
      { element: 'ItemDef[@OID="I_VITAL_TEMP"]', field: 'Name', value: 'hr' },
      { element: 'ItemDef[@OID="I_VITAL_POS"]', field: 'CodeListRef', value: 'CL_MISSING' },
    ]);
    expect(metadata.problems[0]!.problem).toContain('is also the name of ItemDef "I_VITAL_HR"');
  });

  it('asks for the metadata when the file has clinical data only', () => {
    const metadata = metadataOf('<ODM><ClinicalData StudyOID="S" MetaDataVersionOID="v1"/></ODM>');
    expect(metadata.problems).toHaveLength(1);
    expect(metadata.problems[0]!.problem).toMatch(/^the file has no Study\/MetaDataVersion.*export the metadata and the data together/);
  });

  it('reads a REDCap classic project (no unique event names) as having no events', () => {
    const metadata = metadataOf(`<ODM xmlns:redcap="https://projectredcap.org" SourceSystem="REDCap"><Study OID="P"><MetaDataVersion OID="M" redcap:RecordIdField="study_id">
      <StudyEventDef OID="Event.event_1_arm_1" Name="Event 1"><FormRef FormOID="Form.enrol"/></StudyEventDef>
      <FormDef OID="Form.enrol" Name="Enrolment" redcap:FormName="enrol"><ItemGroupRef ItemGroupOID="enrol.study_id"/></FormDef>
      <ItemGroupDef OID="enrol.study_id" Name="Enrolment"><ItemRef ItemOID="study_id" redcap:Variable="study_id"/><ItemRef ItemOID="age" redcap:Variable="age"/></ItemGroupDef>
      <ItemDef OID="study_id" Name="study_id" DataType="text" redcap:Variable="study_id" redcap:FieldType="text"/>
      <ItemDef OID="age" Name="age" DataType="integer" redcap:Variable="age" redcap:FieldType="text" redcap:TextValidationType="integer"/>
    </MetaDataVersion></Study></ODM>`);
    expect(metadata.problems).toEqual([]);
    expect(metadata.value).toMatchObject({ events: [], isLongitudinal: false, columns: ['age'] });
    expect(metadata.value.eventNames.get('Event.event_1_arm_1')).toBe('');
    expect(metadata.value.fields.map((field) => [field.fieldName, field.fieldType])).toEqual([['study_id', 'text'], ['age', 'integer']]);
    expect(metadata.value.items.get('study_id')).toEqual({ kind: 'recordId' });
  });
});
