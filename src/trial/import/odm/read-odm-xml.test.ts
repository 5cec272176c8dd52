import { describe, expect, it } from 'vitest';
import { ClinAgentError } from '../../../core/errors.js';
import { MAX_ODM_CHARS, readOdmXml, UNNAMED_FILE } from './read-odm-xml.js';

const clinical = (items: string) => `<?xml version="1.0" encoding="UTF-8"?>
<ODM xmlns="http://www.cdisc.org/ns/odm/v1.3" ODMVersion="1.3.2">
  <Study OID="S"><MetaDataVersion OID="MDV.1"/></Study>
  <ClinicalData StudyOID="S" MetaDataVersionOID="MDV.1">
    <SubjectData SubjectKey="SUBJ-01">
      <SiteRef LocationOID="SITE_AMS"/>
      <StudyEventData StudyEventOID="SE.V1">
        <FormData FormOID="F.VS"><ItemGroupData ItemGroupOID="IG.VS">
${items}
        </ItemGroupData></FormData>
      </StudyEventData>
    </SubjectData>
  </ClinicalData>
</ODM>`;

describe('readOdmXml', () => {
  it('keeps an uploaded file as its name, a file the export does not name as present, and never its content', () => {
    const { value, problems } = readOdmXml(
      clinical([
        '<ItemDataBase64Binary ItemOID="I.CONSENT" redcap:DocName="consent.pdf">JVBERi0xLjQK</ItemDataBase64Binary>',
        '<ItemDataBase64Binary ItemOID="I.SCAN">JVBERi0xLjQK</ItemDataBase64Binary>',
        '<ItemDataBase64Binary ItemOID="I.XRAY" IsNull="Yes"/>',
      ].join('\n')),
      'x.xml',
    );
    expect(problems).toEqual([]);
    expect(value.events[0]!.items.map((item) => [item.itemOID, item.value, item.isFile])).toEqual([['I.CONSENT', 'consent.pdf', true], ['I.SCAN', UNNAMED_FILE, true], ['I.XRAY', null, true]]);
    expect(JSON.stringify(value)).not.toContain('JVBERi0');
  });

  it('keeps the metadata as a tree and the clinical data as item values with their lines and site', () => {
    const { value, problems } = readOdmXml(clinical('<ItemData ItemOID="I.AGE" Value="54"/>\n<ItemDataInteger ItemOID="I.HR">72</ItemDataInteger>\n<ItemData ItemOID="I.WT" IsNull="Yes"/>'), 'x.xml');
    expect(problems).toEqual([]);
    expect(value.root.attributes.ODMVersion).toBe('1.3.2');
    expect(value.studies.map((study) => study.children.map((child) => child.attributes.OID))).toEqual([['MDV.1']]);
    expect(value.metaDataVersionOID).toBe('MDV.1');
    expect(value.events).toEqual([
      {
        subjectKey: 'SUBJ-01',
        site: 'SITE_AMS',
        studyEventOID: 'SE.V1',
        line: 7,
        items: [
          { itemOID: 'I.AGE', formOID: 'F.VS', itemGroupOID: 'IG.VS', value: '54', line: 9 },
          { itemOID: 'I.HR', formOID: 'F.VS', itemGroupOID: 'IG.VS', value: '72', line: 10 },
          { itemOID: 'I.WT', formOID: 'F.VS', itemGroupOID: 'IG.VS', value: null, line: 11 },
        ],
      },
    ]);
  });

  it('marks repeats above the first, which the import cannot place yet', () => {
    const { value } = readOdmXml(clinical('<ItemData ItemOID="I.AGE" Value="54"/>').replace('ItemGroupOID="IG.VS"', 'ItemGroupOID="IG.VS" ItemGroupRepeatKey="2"').replace('StudyEventOID="SE.V1"', 'StudyEventOID="SE.V1" StudyEventRepeatKey="3"'), 'x.xml');
    expect(value.events[0]).toMatchObject({ repeatKey: '3', items: [{ repeatKey: '2' }] });
  });

  it('reports XML that is not well-formed with its line, and an undeclared entity is never expanded', () => {
    const broken = readOdmXml('<ODM>\n<Study OID="S">\n<MetaDataVersion OID="&lol;"/>\n</Study></ODM>', 'bad.xml');
    expect(broken.problems).toHaveLength(1);
    expect(broken.problems[0]).toMatchObject({ source: 'bad.xml', line: 3, element: '(file)', field: '(file)' });
    expect(broken.problems[0]!.problem).toMatch(/^the file is not well-formed XML \(.*entity.*\); export it again/i);

    const unclosed = readOdmXml('<ODM>\n<Study OID="S">\n</ODM>', 'cut.xml');
    expect(unclosed.problems[0]).toMatchObject({ line: 3 });
  });

  it('says when the root is not ODM', () => {
    const { problems } = readOdmXml('<?xml version="1.0"?>\n<project><record/></project>', 'redcap.xml');
    expect(problems).toEqual([{ source: 'redcap.xml', line: 2, element: 'project', field: '(file)', value: 'project', problem: 'the root element is <project>, not <ODM>; export the project as CDISC ODM 1.3 XML (metadata and data)' }]);
  });

  it('refuses a DOCTYPE, even one without entities, naming its line', () => {
    const attempt = () => readOdmXml('<?xml version="1.0"?>\n\n<!DOCTYPE ODM SYSTEM "http://attacker.example/odm.dtd">\n<ODM/>', 'dtd.xml');
    expect(attempt).toThrow(ClinAgentError);
    expect(attempt).toThrow(/^dtd\.xml has a DOCTYPE declaration \(line 3\)/);
  });

  it('refuses text over the size limit before parsing it', () => {
    const huge = { length: MAX_ODM_CHARS + 1 } as string;
    expect(() => readOdmXml(huge, 'huge.xml')).toThrow(/more than the 256 MB one ODM import reads\. Export the clinical data in parts/);
  });
});
