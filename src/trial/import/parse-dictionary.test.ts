import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ClinAgentError } from '../../core/errors.js';
import { parseDictionaryCsv, parseDictionaryText } from './parse-dictionary.js';
import { packageRoot } from '../../core/paths.js';

const readTrialTestFile = (name: string) => readFileSync(path.join(packageRoot(), 'test-data', 'trial', name), 'utf8');

const HEADER =
  '"Variable / Field Name","Form Name","Section Header","Field Type","Field Label","Choices, Calculations, OR Slider Labels","Field Note","Text Validation Type OR Show Slider Number","Text Validation Min","Text Validation Max","Identifier?","Branching Logic (Show field only if...)","Required Field?"';

describe('parseDictionaryCsv', () => {
  it('reads a REDCap data dictionary with a BOM, CRLF, Chinese labels and quoted multi-line cells', () => {
    const fields = parseDictionaryCsv(readTrialTestFile('redcap-dictionary.csv'));

    expect(fields.map((field) => field.fieldName)).toEqual(['record_id', 'consent_date', 'age', 'sex', 'symptoms', 'bmi', 'notes', 'visit_date', 'sbp', 'weight_kg', 'ae_occurred', 'ae_start']);
    expect(fields.find((field) => field.fieldName === 'age')).toEqual({
      fieldName: 'age',
      formName: 'enrolment',
      fieldType: 'integer',
      label: '年龄（岁）Age, years',
      choices: [],
      validationMin: '0',
      validationMax: '120',
      required: true,
      identifier: false,
    });
    expect(fields.find((field) => field.fieldName === 'sex')?.choices).toEqual([
      { code: '1', label: '男 Male' },
      { code: '2', label: '女 Female' },
    ]);
    // Only the first comma splits code from label.
    expect(fields.find((field) => field.fieldName === 'symptoms')?.choices[2]).toEqual({ code: '3', label: 'Other, specify' });
    expect(fields.find((field) => field.fieldName === 'notes')?.label).toBe('备注 Notes\r\n(free text, may span lines)');
    expect(fields.find((field) => field.fieldName === 'ae_occurred')?.choices).toEqual([
      { code: '1', label: 'Yes' },
      { code: '0', label: 'No' },
    ]);
  });

  it('maps REDCap field and validation types to field types', () => {
    const csv = [
      HEADER,
      'record_id,f,,text,Id,,,,,,,,',
      'n_int,f,,text,Int,,,integer,,,,,',
      'n_old,f,,text,Int (old REDCap),,,int,,,,,',
      'n_1dp,f,,text,Number,,,number_1dp,,,,,',
      'n_float,f,,text,Float,,,float,,,,,',
      'd_ymd,f,,text,Date,,,date_ymd,,,,,',
      'd_dmy,f,,text,Date dmy,,,date_dmy,,,,,',
      'dt,f,,text,Datetime,,,datetime_seconds_ymd,,,,,',
      'mail,f,,text,Email,,,email,,,,,',
      'pain,f,,slider,Pain,"None | | Worst",,number,,,,,',
      'upload,f,,file,ECG,,,,,,,,',
      'tf,f,,truefalse,True?,,,,,,,,',
      'dd,f,,dropdown,Arm,"1, A | 2, B",,,,,,,',
    ].join('\n');
    const types = Object.fromEntries(parseDictionaryCsv(csv).map((field) => [field.fieldName, field.fieldType]));
    expect(types).toEqual({
      record_id: 'text',
      n_int: 'integer',
      n_old: 'integer',
      n_1dp: 'number',
      n_float: 'number',
      d_ymd: 'date',
      d_dmy: 'date',
      dt: 'datetime',
      mail: 'text',
      pain: 'integer',
      upload: 'file',
      tf: 'truefalse',
      dd: 'dropdown',
    });
    const pain = parseDictionaryCsv(csv).find((field) => field.fieldName === 'pain');
    expect([pain?.validationMin, pain?.validationMax]).toEqual(['0', '100']);
  });

  it('accepts the API metadata keys as headers', () => {
    const csv = ['field_name,form_name,field_type,field_label,select_choices_or_calculations,required_field', 'record_id,f,text,Id,,', 'sex,f,radio,Sex,"1, M | 2, F",y'].join('\n');
    expect(parseDictionaryCsv(csv)[1]).toMatchObject({ fieldName: 'sex', fieldType: 'radio', required: true, choices: [{ code: '1', label: 'M' }, { code: '2', label: 'F' }] });
  });

  it('reads the "Identifier?" column: "y" marks an identifier, blank does not, anything else is a problem', () => {
    const csv = [
      HEADER,
      'record_id,f,,text,受试者编号 Subject ID,,,,,,,,',
      'subject_name,f,,text,姓名 Name,,,,,,y,,',
      'phone,f,,text,电话 Phone,,,phone,,,Y,,',
      'age,f,,text,年龄 Age,,,integer,18,75,,,y',
    ].join('\r\n');
    expect(parseDictionaryCsv(csv).map((field) => [field.fieldName, field.identifier])).toEqual([
      ['record_id', false],
      ['subject_name', true],
      ['phone', true],
      ['age', false],
    ]);
    // The API's metadata key is "identifier", with the same values.
    expect(parseDictionaryCsv('field_name,form_name,field_type,field_label,identifier\nrecord_id,f,text,Id,\ndob,f,text,DOB,y\n')[1]).toMatchObject({ fieldName: 'dob', identifier: true });

    const { problems } = parseDictionaryText([HEADER, 'record_id,f,,text,Id,,,,,,,,', 'subject_name,f,,text,Name,,,,,,maybe,,'].join('\n'));
    expect(problems).toEqual([expect.objectContaining({ line: 3, field: 'Identifier?', value: 'maybe', problem: expect.stringContaining('is not "y" or blank') })]);
  });

  it('reports every bad dictionary row with its line and column', () => {
    const csv = [
      HEADER,
      'record_id,f,,text,Id,,,,,,,,',
      'Age,f,,text,Age,,,integer,,,,,', // 3: upper case name
      'weight,f,,text,Weight,,,number,abc,,,,', // 4: bad bound
      'weight,f,,text,Weight again,,,,,,,,', // 5: duplicate
      'sex,f,,radio,Sex,"Male | Female",,,,,,,', // 6: choices without codes
      'sbp,f,,text,SBP,,,integer,200,100,,,', // 7: min above max
      'pic,f,,image,Picture,,,,,,,,', // 8: unknown type
      'note,,,notes,Note,,,,,,,,maybe', // 9: no form, bad required flag
    ].join('\n');
    const { problems } = parseDictionaryText(csv);
    expect(problems.map((problem) => [problem.line, problem.field])).toEqual([
      [3, 'Variable / Field Name'],
      [4, 'Text Validation Min'],
      [5, 'Variable / Field Name'],
      [6, 'Choices, Calculations, OR Slider Labels'],
      [6, 'Choices, Calculations, OR Slider Labels'],
      [7, 'Text Validation Min'],
      [8, 'Field Type'],
      [9, 'Form Name'],
      [9, 'Required Field?'],
    ]);
    expect(problems[2]?.problem).toBe('"weight" is already defined on line 4; variable names must be unique');
    expect(problems[6]?.problem).toContain('"image" is not a REDCap field type');
  });

  it('names each missing required column', () => {
    const error = catchError(() => parseDictionaryCsv('"Variable / Field Name","Field Label"\nrecord_id,Id\n'));
    expect(error.code).toBe('IMPORT_INVALID');
    expect(error.message).toContain('dictionary.csv line 1, field Form Name: the column "Form Name" is missing');
    expect(error.message).toContain('field Field Type');
  });
});

function catchError(fn: () => unknown): ClinAgentError {
  try {
    fn();
  } catch (error) {
    if (ClinAgentError.isInstance(error)) return error;
    throw error;
  }
  throw new Error('expected a ClinAgentError');
}
