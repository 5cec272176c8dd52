import { describe, expect, it } from 'vitest';
import { isIdentifierKey, REDACTED, redactIdentifierText, withoutIdentifierKeys, withoutIdentifiers, withoutIdentifiersInModelText } from './identifiers.js';

describe('identifiers in a consult', () => {
  it('knows an identifier key by its words, not only its exact spelling', () => {
    for (const key of ['patient_full_name', 'englishName', 'home_phone', 'residential_address', 'identity_card', 'id_no', 'emergencyContactPhone', 'e-mail', '联系人电话', '家庭住址', '患者姓名']) {
      expect(isIdentifierKey(key), key).toBe(true);
    }
    for (const key of ['drug_name', 'condition_name', 'brandName', 'skin_type', 'severity', 'contacts', 'relation', 'occupation', 'allergies']) {
      expect(isIdentifierKey(key), key).toBe(false);
    }
  });

  it('drops a value that is nothing but an identifier, whatever its key', () => {
    expect(withoutIdentifierKeys({ contact_person: { relation: 'mother', number: '021 6234 5678' }, other: ['wxm@example.com', 'dry skin'], note: 'itchy at night' })).toEqual({
      contact_person: { relation: 'mother' },
      other: ['dry skin'],
      note: 'itchy at night',
    });
  });

  it('replaces landlines, mobiles, ID numbers with spaces, e-mail, addresses and stated names in text', () => {
    const cases: Array<[string, string]> = [
      ['home 010-62345678 or (021) 6234 5678', `home ${REDACTED} or ${REDACTED}`],
      ['call 138 1234 5678', `call ${REDACTED}`],
      ['ID 110101 19900307 1234 on file', `ID ${REDACTED} on file`],
      ['write to wxm@example.com', `write to ${REDACTED}`],
      ['lives at 12 Baker Street, London', `lives at ${REDACTED}, London`],
      // Chinese has no spaces: the words before the city name go with it, which errs on the side of removing.
      ['住在北京市海淀区中关村大街27号', REDACTED],
      ['地址：中关村大街27号3单元', `地址：${REDACTED}`],
      ['My name is Wang Xiaoming and I have a rash', `My name is ${REDACTED} and I have a rash`],
      ['我叫王小明，手上起疹子', `我叫${REDACTED}，手上起疹子`],
    ];
    for (const [text, expected] of cases) expect(redactIdentifierText(text), text).toBe(expected);
  });

  it('leaves clinical text alone: durations, doses, dates, readings and body sites', () => {
    for (const text of ['3 天', '0.5 mg/kg daily for 16-24 weeks', 'since 2026-03-01', 'BP 120/80, temperature 38.5', '患处区域红肿，呼吸道无症状', '500 mg four times daily for 5-7 days', '左手腕 2 cm 的红斑']) {
      expect(redactIdentifierText(text), text).toBe(text);
    }
  });

  it('reads a bare "name" by what holds it: a symptom or a drug is no person', () => {
    expect(isIdentifierKey('name', 'symptoms')).toBe(false);
    expect(isIdentifierKey('name', 'suspected_conditions')).toBe(false);
    expect(isIdentifierKey('name', 'medications')).toBe(false);
    expect(isIdentifierKey('name', 'allergies')).toBe(false);
    for (const parent of [undefined, 'patient_info', 'emergency_contact', 'additional_information']) expect(isIdentifierKey('name', parent), String(parent)).toBe(true);
    expect(withoutIdentifierKeys({ symptoms: [{ name: 'rash', phone: '13812345678' }], patient_info: { name: 'Zhang Wei', age: 34 } })).toEqual({ symptoms: [{ name: 'rash' }], patient_info: { age: 34 } });
  });

  it('takes a value dropped under an identifier key out of the rest of the same answer, and of later ones given the same list', () => {
    const known: string[] = [];
    expect(withoutIdentifiers({ patient_full_name: 'Zhang Wei', thought: 'Zhang Wei wants a record', home_phone: 'none', note: 'none known' }, known)).toEqual({ thought: `${REDACTED} wants a record`, note: 'none known' });
    expect(withoutIdentifiers({ response: 'Thank you, Zhang Wei.' }, known)).toEqual({ response: `Thank you, ${REDACTED}.` });
    // Without the list, a later answer has only the patterns to go by.
    expect(withoutIdentifiers({ response: 'Thank you, Zhang Wei.' })).toEqual({ response: 'Thank you, Zhang Wei.' });
  });

  it("cleans a model's text: JSON written again without identifiers, cut-off JSON by its keys, prose by its patterns, inline images untouched", () => {
    const decision = JSON.stringify({ action: 'respond', response: 'Noted 13812345678.', medical_context_update: { symptoms: [{ name: 'rash' }], patient_info: { name: 'Zhang Wei' } } });
    expect(JSON.parse(withoutIdentifiersInModelText(decision))).toEqual({ action: 'respond', response: `Noted ${REDACTED}.`, medical_context_update: { symptoms: [{ name: 'rash' }], patient_info: {} } });
    const clean = '{"action": "respond", "response": "How long has it itched?"}';
    expect(withoutIdentifiersInModelText(clean)).toBe(clean);
    expect(withoutIdentifiersInModelText('{"action": "use_tool", "tool_input": {"patient_full_name": "Zhang Wei", "chief_complaint": "rash", "home_ph')).toBe(
      `{"action": "use_tool", "tool_input": {"patient_full_name": "${REDACTED}", "chief_complaint": "rash", "home_ph`,
    );
    expect(withoutIdentifiersInModelText('Call me on 021 6234 5678.')).toBe(`Call me on ${REDACTED}.`);
    const image = JSON.stringify({ image_base64: `data:image/png;base64,${'A1'.repeat(100)}13812345678${'B2'.repeat(100)}`, context: 'rash on the arm' });
    expect(withoutIdentifiersInModelText(image)).toBe(image);
  });
});
