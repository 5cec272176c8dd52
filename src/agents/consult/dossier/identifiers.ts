/**
 * What keeps direct identifiers out of a consult's dossier. The dossier is returned to the model, stored and
 * exported; it describes a skin complaint, which needs no name, phone number, ID number or address. Keys that name
 * such a field are dropped from what the model passed (at any depth), and text that looks like a phone number, a
 * Chinese resident ID number or an e-mail address is replaced wherever it appears (the transcript included). A
 * name written in free text cannot be told from other words, so it is the key rule that keeps names out.
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
const IDENTIFIER_KEY_PARTS = /姓名|电话|手机|身份证|证件号|地址|住址/;

const normaliseKey = (key: string) => key.normalize('NFKC').toLowerCase().replace(/[^\p{L}\p{N}]/gu, '');

export function isIdentifierKey(key: string): boolean {
  const normalised = normaliseKey(key);
  return IDENTIFIER_KEYS.has(normalised) || IDENTIFIER_KEY_PARTS.test(normalised);
}

/** `value` without identifier keys at any depth (objects inside lists included). */
export function withoutIdentifierKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutIdentifierKeys);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(Object.entries(value).filter(([key]) => !isIdentifierKey(key)).map(([key, inner]) => [key, withoutIdentifierKeys(inner)]));
}

export const REDACTED = '[identifier removed]';

const IDENTIFIER_TEXT = [
  // Chinese resident ID number: 6-digit area, birth date 18xx-20xx, 3 digits, check digit or X.
  /(?<![\dA-Za-z])\d{6}(?:18|19|20)\d{2}(?:0[1-9]|1[0-2])(?:0[1-9]|[12]\d|3[01])\d{3}[\dXx](?![\dA-Za-z])/g,
  // Mainland mobile numbers, with or without +86 and separators.
  /(?<![\d+])(?:\+?86[\s-]?)?1[3-9]\d[\s-]?\d{4}[\s-]?\d{4}(?!\d)/g,
  // Other international numbers: a + and at least 8 digits.
  /\+\d[\d\s-]{6,}\d/g,
  /[\w.+-]+@[\w-]+(?:\.[\w-]+)+/g,
];

/** `text` with phone numbers, ID numbers and e-mail addresses replaced by REDACTED. */
export function redactIdentifierText(text: string): string {
  return IDENTIFIER_TEXT.reduce((current, pattern) => current.replace(pattern, REDACTED), text);
}
