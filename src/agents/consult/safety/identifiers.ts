import { parseStructuredOutput } from '../../../core/structured/parse.js';

/**
 * What keeps direct identifiers out of a consult: its dossier, the model's requests, its traces and its state. A
 * skin complaint needs no name, phone number, ID number, address or e-mail, and whatever reaches the consult (the
 * patient's message, the model's medical context, tool calls and replies) is stored, traced and sent back.
 * Identifiers are recognised by what they are, not by an exact key: a key is read as words ("patient_full_name" is
 * a name, "home_phone" a phone, "identity_card" an ID), a value that is wholly a phone number, ID number, e-mail
 * or address is dropped whatever its key ("number": "021 6234 5678"), and identifier-looking text is replaced
 * wherever it appears (the transcript included). A name in free text cannot be told from other words, except where
 * the text says it is one ("my name is ...", "我叫..."): keys and those phrases are what keep names out.
 */

/** Identifier keys, compared after lower-casing and removing everything but letters and digits ("ID-Number" -> "idnumber"). */
const IDENTIFIER_KEYS = new Set([
  'name', 'fullname', 'firstname', 'lastname', 'surname', 'givenname', 'familyname', 'middlename', 'nickname', 'patientname', 'realname',
  'phone', 'phonenumber', 'mobile', 'mobilephone', 'mobilenumber', 'cellphone', 'telephone', 'tel', 'contactnumber', 'wechat',
  'email', 'emailaddress',
  'id', 'idnumber', 'idno', 'idcard', 'idcardnumber', 'nationalid', 'ssn', 'socialsecuritynumber', 'passport', 'passportnumber',
  'mrn', 'medicalrecordnumber', 'insurancenumber', 'patientid',
  'address', 'homeaddress', 'street', 'streetaddress', 'postcode', 'postalcode', 'zip', 'zipcode',
  'birthdate', 'dateofbirth', 'dob',
  '名字', '病历号', '住院号', '门诊号', '医保号', '邮箱', '微信', '出生日期',
]);

/** Chinese key fragments that only ever name an identifier (姓名, 联系电话, 身份证号码, 家庭住址, 手机号). */
const IDENTIFIER_KEY_PARTS = /姓名|名字|电话|手机|座机|身份证|证件|护照|地址|住址|邮箱|微信|联系人/;

/** Words that make a key an identifier wherever they stand in it ("home_phone", "residentialAddress"). */
const IDENTIFIER_WORDS = new Set([
  'phone', 'phones', 'telephone', 'tel', 'mobile', 'cell', 'cellphone', 'landline', 'fax', 'email', 'mail', 'wechat', 'whatsapp',
  'address', 'addr', 'street', 'postcode', 'zip', 'zipcode', 'residence',
  'identity', 'identification', 'idcard', 'passport', 'ssn', 'nric', 'mrn', 'dob', 'birthdate', 'birthday', 'surname', 'fullname',
]);

/** "name" in a key is a person's name unless a word before it says what else it names ("drug_name"). */
const NOT_A_PERSON = new Set(['drug', 'medication', 'medicine', 'condition', 'disease', 'diagnosis', 'brand', 'product', 'generic', 'trade', 'allergen', 'test', 'file', 'image', 'tool', 'species', 'cream', 'chemical', 'ingredient']);
/**
 * A bare "name" inside these names a thing, not a person: models write `symptoms: [{"name": "rash"}]` and
 * `medications: [{"name": "doxycycline"}]`. Compared in the singular ("symptoms" -> "symptom").
 */
const THINGS = new Set([...NOT_A_PERSON, 'symptom', 'sign', 'finding', 'differential', 'diagnose', 'treatment', 'therapy', 'allergy', 'trigger', 'lesion', 'location', 'site', 'exclusion', 'excluded', 'warning', 'option', 'suspected']);
const singular = (word: string) => word.replace(/ies$/, 'y').replace(/s$/, '');

const normaliseKey = (key: string) => key.normalize('NFKC').toLowerCase().replace(/[^\p{L}\p{N}]/gu, '');

/** "patient_full_name" -> ["patient", "full", "name"], "homePhone" -> ["home", "phone"]. */
function keyWords(key: string): string[] {
  return key
    .normalize('NFKC')
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter(Boolean);
}

/** `parentKey`: the key holding the object (or the list of objects) `key` is in, which says what a bare "name" names. */
export function isIdentifierKey(key: string, parentKey?: string): boolean {
  const normalised = normaliseKey(key);
  if ((normalised === 'name' || normalised === 'names') && parentKey !== undefined && keyWords(parentKey).some((word) => THINGS.has(singular(word)))) return false;
  if (IDENTIFIER_KEYS.has(normalised) || IDENTIFIER_KEY_PARTS.test(normalised)) return true;
  const words = keyWords(key);
  if (words.some((word) => IDENTIFIER_WORDS.has(word))) return true;
  // "id" alone or with "number"/"card"/"no" ("id_no", "national_id"); not "said" or "idea", which are other words.
  if (words.includes('id') && words.length <= 3) return true;
  const nameAt = words.findIndex((word) => word === 'name' || word === 'names');
  return nameAt >= 0 && !words.slice(0, nameAt).some((word) => NOT_A_PERSON.has(word));
}

export const REDACTED = '[identifier removed]';

const IDENTIFIER_TEXT: Array<{ pattern: RegExp; keep?: number }> = [
  // Chinese resident ID number: 6-digit area, birth date 18xx-20xx, 3 digits, check digit or X; spaces or dashes allowed between the parts.
  { pattern: /(?<![\dA-Za-z])\d{6}[\s-]?(?:18|19|20)\d{2}(?:0[1-9]|1[0-2])(?:0[1-9]|[12]\d|3[01])[\s-]?\d{3}[\dXx](?![\dA-Za-z])/g },
  // Mainland mobile numbers, with or without +86 and separators.
  { pattern: /(?<![\d+])(?:\+?86[\s-]?)?1[3-9]\d[\s-]?\d{4}[\s-]?\d{4}(?!\d)/g },
  // Other international numbers: a + and at least 8 digits.
  { pattern: /\+\d[\d\s-]{6,}\d/g },
  // Mainland landlines: a 3- or 4-digit area code starting with 0, then 7 or 8 digits ("010-62345678", "(021) 6234 5678").
  // A dot then a digit around it makes a decimal ("0.5"); a full stop after it only ends the sentence.
  { pattern: /(?<![\d.])(?:\(0\d{2,3}\)|0\d{2,3})[\s-]?\d{3,4}[\s-]?\d{4}(?!\d|\.\d)/g },
  // North American numbers: "(555) 123-4567", "555-123-4567".
  { pattern: /(?<![\d.])(?:\(\d{3}\)\s?|\d{3}[\s.-])\d{3}[\s.-]\d{4}(?!\d|\.\d)/g },
  // US social security numbers.
  { pattern: /(?<!\d)\d{3}-\d{2}-\d{4}(?!\d)/g },
  { pattern: /[\w.+-]+@[\w-]+(?:\.[\w-]+)+/g },
  // Chinese addresses: a city and its district or county, then perhaps a street and house number ("北京市海淀区中关村大街27号").
  // A lone 区 or 道 is common in clinical Chinese (患处区域, 呼吸道), so the city-district pair is what marks an address.
  { pattern: /[\p{Script=Han}]{1,8}?市[\p{Script=Han}]{1,8}?(?:区|县)(?:[\p{Script=Han}\d]{0,20}?(?:路|街|大道|巷|弄|胡同)(?:\s*[\d-]+\s*号)?)?/gu },
  // A street and house number without a city ("中关村大街27号").
  { pattern: /[\p{Script=Han}]{1,12}(?:路|街|道|巷|弄|胡同)\s*\d+\s*号(?:[\p{Script=Han}\d]{0,12}?(?:栋|幢|单元|室|楼))?/gu },
  // English street addresses: a house number, one to three capitalised words and a street type ("12 Baker Street").
  { pattern: /\b\d{1,5}[A-Za-z]?\s+(?:[A-Z][a-z]+\s+){1,3}(?:Street|St|Road|Rd|Avenue|Ave|Lane|Ln|Drive|Dr|Boulevard|Blvd|Way|Court|Ct|Place|Pl|Terrace|Close|Crescent|Square|Sq)\b\.?/g },
  // A name the text says is one; the words before it stay.
  { pattern: /((?:[Mm]y (?:full )?name is|[Mm]y name's|I am called|I'm called|[Nn]ame:)\s*)[A-Z][A-Za-z'-]+(?:\s+[A-Z][A-Za-z'-]+){0,2}/g, keep: 1 },
  { pattern: /((?:我叫|我的名字是|我的名字叫|我姓名是|本人姓名[:：]?|患者姓名[:：]?)\s*)[\p{Script=Han}·]{2,4}/gu, keep: 1 },
];

/** `text` with names that say they are names, phone numbers, ID numbers, addresses and e-mail addresses replaced by REDACTED. */
export function redactIdentifierText(text: string): string {
  return IDENTIFIER_TEXT.reduce((current, { pattern, keep }) => current.replace(pattern, (...match) => (keep ? `${match[keep] as string}${REDACTED}` : REDACTED)), text);
}

/** A value that is nothing but identifiers once they are replaced ("021 6234 5678", "wxm@example.com"). */
function isIdentifierValue(value: unknown): boolean {
  if (typeof value !== 'string' || value.trim() === '') return false;
  const redacted = redactIdentifierText(value);
  return redacted !== value && redacted.split(REDACTED).every((rest) => /^[\s,;，；、/|]*$/.test(rest));
}

/** `value` without identifier keys or identifier-only values at any depth (objects inside lists included). */
export function withoutIdentifierKeys(value: unknown): unknown {
  return dropIdentifiers(value, undefined, []);
}

/** Drops identifier keys and values; the strings dropped are pushed to `dropped`, to be found again elsewhere. */
function dropIdentifiers(value: unknown, parentKey: string | undefined, dropped: string[]): unknown {
  if (Array.isArray(value)) {
    const kept = value.filter((item) => !isIdentifierValue(item));
    dropped.push(...value.filter((item) => isIdentifierValue(item)).flatMap(stringsIn));
    return kept.map((item) => dropIdentifiers(item, parentKey, dropped));
  }
  if (value === null || typeof value !== 'object') return value;
  const kept: Array<[string, unknown]> = [];
  for (const [key, inner] of Object.entries(value)) {
    if (isIdentifierKey(key, parentKey) || isIdentifierValue(inner)) dropped.push(...stringsIn(inner));
    else kept.push([key, dropIdentifiers(inner, key, dropped)]);
  }
  return Object.fromEntries(kept);
}

function stringsIn(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  if (value !== null && typeof value === 'object') return Object.values(value).flatMap(stringsIn);
  return [];
}

/**
 * Base64 (an image the model passed inline) is no text: a run of digits in it is no phone number, and replacing
 * one would break the image.
 */
const BASE64 = /^(?:data:[\w/+.-]+;base64,)?[A-Za-z0-9+/=]{200,}$/;

/**
 * A dropped value looked for elsewhere must look like an identifier on its own: a number or e-mail, two or more
 * capitalised words, a Chinese name, or something long. `home_phone: "none"` or `has_phone: "yes"` must not take
 * every "none" and "yes" out of the answer, nor a surname "Li" out of "Lichen planus".
 */
const isKnowable = (value: string) =>
  (value.length >= 4 && /[\d@]/.test(value)) || /^[A-Z][a-zA-Z'-]+(?:\s+[A-Z][a-zA-Z'-]+)+$/.test(value) || /^[\p{Script=Han}·]{2,4}$/u.test(value) || value.length >= 8;

/** `text` with identifier-looking text and each of `known` (values already dropped as identifiers) replaced. */
function redactText(text: string, known: readonly string[]): string {
  if (BASE64.test(text)) return text;
  const withoutKnown = known.reduce((current, value) => current.split(value).join(REDACTED), text);
  return redactIdentifierText(withoutKnown);
}

function redactStrings(value: unknown, known: readonly string[]): unknown {
  if (typeof value === 'string') return redactText(value, known);
  if (Array.isArray(value)) return value.map((item) => redactStrings(item, known));
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, redactStrings(inner, known)]));
}

/** Every string in `value` with identifier text (and each of `known`) replaced; keys and shape stay as they are. */
export function withIdentifierTextReplaced(value: unknown, known: readonly string[] = []): unknown {
  return redactStrings(value, knownValues(known));
}

/** Longest first, so "Zhang Wei" goes before "Zhang" would leave " Wei". */
const knownValues = (dropped: readonly string[]) =>
  [...new Set(dropped.map((value) => value.trim()).filter(isKnowable))].sort((a, b) => b.length - a.length);

/**
 * `value` with no identifier left at any depth: identifier keys and identifier-only values dropped, identifier text
 * replaced in every string, and a value dropped under an identifier key replaced wherever else it appears in
 * `value` (`patient_full_name: "Zhang Wei"` also leaves "Thank you, Zhang Wei" in the same answer). `known`: values
 * already dropped elsewhere (an earlier answer of the same turn), looked for too; what this call drops is added to it.
 */
export function withoutIdentifiers(value: unknown, known: string[] = []): unknown {
  const dropped: string[] = [];
  const kept = dropIdentifiers(value, undefined, dropped);
  known.splice(0, known.length, ...knownValues([...known, ...dropped]));
  return redactStrings(kept, known);
}

/** `"home_phone": "..."` in JSON text that does not parse (cut off): the value of an identifier key, replaced. */
const JSON_PAIR = /"((?:[^"\\]|\\.){1,80})"(\s*:\s*)"(?:[^"\\]|\\.)*"/g;

/**
 * What a model wrote (a JSON decision, tool-call arguments or prose) without identifiers. JSON is read and written
 * again without them when it had some, so the loop still parses it; text that only looks like JSON (cut off) keeps
 * its shape with the values of identifier keys replaced; prose has identifier text replaced. `known` as above.
 */
export function withoutIdentifiersInModelText(text: string, known: string[] = []): string {
  if (!/[{[]/.test(text)) return redactText(text, knownValues(known));
  const parsed = parseStructuredOutput(text, { name: 'model_text', schema: { type: 'object' } });
  if (parsed.success) {
    const scrubbed = withoutIdentifiers(parsed.data, known);
    return JSON.stringify(scrubbed) === JSON.stringify(parsed.data) ? redactText(text, known) : JSON.stringify(scrubbed);
  }
  const pairsReplaced = text.replace(JSON_PAIR, (pair, key: string, colon: string) => (isIdentifierKey(key) ? `"${key}"${colon}"${REDACTED}"` : pair));
  return redactText(pairsReplaced, knownValues(known));
}
