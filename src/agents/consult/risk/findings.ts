import { affirms, splitClauses, terms, type TermSet } from './clinical-text.js';

/**
 * The clinical signs the safety check reads from the symptom text, each a bilingual term list. A sign counts when
 * one clause of the text affirms it (see clinical-text.ts for negation). Most combinations (fever with a rash,
 * a mole that grows) are read across the whole consult, since a patient lists them as separate symptoms
 * ["黑痣", "最近变大"]; only a mucosal sore needs its site and the sore in one clause ("口腔溃烂"), or the site
 * among the locations, because "溃烂" alone may be anywhere on the skin.
 */

const FEVER = terms('fever', [
  '发烧', '发热', '高烧', '低烧', '高热', '低热', '体温升高', '体温高', '烧到',
  'fevers?', 'feverish', 'febrile', 'pyrexia', 'high temperature', 'running a temperature',
  // A measured temperature of 38 °C or more (NFKC turns "℃" into "°c"), or over 100.4 °F.
  '(?:3[89]|4[0-2])(?:\\.\\d+)?\\s*(?:°\\s*c?|度|摄氏度)', 'temp(?:erature)?\\s*(?:of|is|was|:)?\\s*(?:3[89]|4[0-2])(?:\\.\\d+)?',
  '(?:10[1-6]|100\\.[4-9])\\s*(?:°\\s*f|f)(?![a-z])',
]);

const RASH = terms('rash', [
  '疹', '红斑', '风团', '斑块', '皮损', '红点', '红疙瘩', '斑点', '出血点', '紫癜',
  'rash(?:es)?', 'eruptions?', 'spots', 'red dots', 'bumps', 'hives', 'welts', 'lesions?', 'exanthem', 'petechiae', 'purpura',
]);

const WIDESPREAD = terms('widespread', [
  '全身', '遍布', '遍及', '大面积', '泛发', '弥漫', '到处都是', '浑身', '满身', '多处', '躯干和四肢',
  'widespread', 'all over', 'whole body', 'entire body', 'generali[sz]ed', 'diffuse', 'everywhere',
  'most of (?:my|the|his|her) body', 'spreading all over',
]);

const BLISTERING = terms('blistering', [
  '水疱', '水泡', '大疱', '血疱', '起泡', '起疱', '大片脱皮', '皮肤剥脱', '表皮剥脱', '表皮脱落', '皮肤脱落',
  'blisters?', 'blistering', 'bullae', 'bullous', 'vesicles?', 'skin (?:is )?peeling off', 'skin (?:is )?coming off',
  'sloughing', 'peeling in sheets',
]);

const MUCOSAL_SITE: Record<'mouth' | 'eyes' | 'genitals', TermSet> = {
  mouth: terms('mouth', ['口腔', '口里', '嘴里', '嘴巴', '嘴唇', '唇', '舌', '牙龈', 'mouth', 'oral', 'lips?', 'tongue', 'gums?']),
  eyes: terms('eyes', ['眼睛', '眼', '结膜', 'eyes?', 'conjunctiva']),
  genitals: terms('genitals', ['生殖器', '外阴', '阴部', '阴茎', '龟头', '私处', 'genitals?', 'genital area', 'vulva', 'penis', 'private parts']),
};

const EROSION = terms('erosion', [
  '溃烂', '溃疡', '糜烂', '破溃', '烂', 'ulcers?', 'ulcerat(?:ed|ion|ions)', 'sores?', 'erosions?', 'raw and painful',
]);

// An inflamed eye surface is mucosal involvement by itself (as in Stevens-Johnson syndrome).
const CONJUNCTIVITIS = terms('conjunctivitis', ['结膜炎', '眼睛发红', '眼睛红', '红眼', 'conjunctivitis', 'red eyes', 'bloodshot eyes']);

const PIGMENTED_LESION = terms('pigmented lesion', [
  '痣', '黑斑', '色素斑', '色斑', 'moles?', 'nev(?:us|i)', 'naev(?:us|i)', 'pigmented (?:lesion|spot|patch|mark)s?',
  'dark spots?', 'black spots?', 'brown spots?', 'melanoma',
]);

/** The ABCDE criteria for a pigmented lesion, plus bleeding, which dermatology referral guides add to them. */
const ABCDE: Record<'asymmetry' | 'border' | 'colour' | 'diameter' | 'evolving' | 'bleeding', TermSet> = {
  asymmetry: terms('asymmetry', ['不对称', '形状不规则', '形状不规整', 'asymmetric(?:al)?', 'asymmetry', 'uneven shape', 'irregular shape']),
  border: terms('border', [
    '边缘不规则', '边缘不整', '边缘不齐', '边界不清', '边缘模糊', '边界模糊',
    'irregular (?:border|edge|margin)s?', '(?:ragged|blurred|notched|jagged) (?:border|edge|margin)s?',
  ]),
  colour: terms('colour', [
    '变色', '颜色改变', '颜色变', '颜色不均', '颜色加深', '变黑', '变深', '多种颜色',
    'colou?r (?:change|changes|changing|changed)', 'chang(?:ed|ing) colou?r', 'multiple colou?rs', 'uneven(?:ly)? colou?r(?:ed)?',
    'darken(?:ed|ing)?', 'getting darker', 'turned black',
  ]),
  diameter: terms('diameter', ['(?:[6-9]|[1-9]\\d)\\s*(?:mm|毫米)', '(?:大于|超过)\\s*6', 'larger than (?:6|six)', 'bigger than a pencil eraser']),
  evolving: terms('evolving', [
    '变大', '增大', '长大', '越来越大', '变高', '隆起', '凸起', '新长', '在长',
    'growing', 'grown', 'getting (?:bigger|larger)', 'enlarg(?:ing|ed)', 'changing', 'changed', 'evolving', 'new mole',
  ]),
  bleeding: terms('bleeding', ['出血', '流血', '渗血', '破溃', 'bleed(?:s|ing)?', 'bled', 'oozing']),
};

const REDNESS = terms('redness', [
  '红肿', '发红', '泛红', '变红', '红热', '红了', '红一片', '一片红', '皮肤红',
  'redness', 'reddened', 'red (?:and )?(?:hot|swollen|warm)', 'red,? swollen', 'swollen,? (?:and )?red', 'red skin',
  'skin (?:is |has )?(?:turned |gone )?red', 'erythema', 'inflamed',
]);

const SPREADING = terms('spreading', [
  '扩散', '蔓延', '扩大', '越来越大', '范围变大', '迅速变大',
  'spread(?:s|ing)?', 'expanding', 'getting (?:bigger|larger)', 'growing',
]);

const PAIN = terms('pain', ['疼痛', '痛', '疼', '触痛', '压痛', 'pain', 'painful', 'hurts?', 'hurting', 'tender(?:ness)?', 'sore']);

const FACIAL_SWELLING = terms('facial swelling', [
  '(?:脸|面部|面颊|嘴唇|唇|舌头|舌|眼睑|眼皮|眼睛|眼周|喉咙|喉头).{0,3}?(?:肿|水肿|浮肿)', '血管性水肿',
  '(?:face|facial|lips?|tongue|eyelids?|throat) swelling', 'swollen (?:face|lips?|tongue|eyelids?|eyes|throat)',
  '(?:face|lips?|tongue|eyelids?|throat) (?:is |are |got |has |have )?(?:swollen|swelling|puffy)', 'swelling of (?:the |my )?(?:face|lips?|tongue|eyelids?|throat)',
  'angioedema',
]);

const BREATHING_TROUBLE = terms('breathing trouble', [
  '呼吸困难', '喘不过气', '喘不上气', '透不过气', '上不来气', '呼吸急促', '憋气', '气短', '气促', '无法呼吸', '不能呼吸', '呼吸不畅',
  '喉咙发紧', '喉咙紧', '喘息', '胸闷',
  '(?:difficulty|trouble|problems?|struggling) breathing', 'hard to breathe', 'short(?:ness)? of breath', 'breathless(?:ness)?',
  "can'?t breathe", 'cannot breathe', 'unable to breathe', 'wheez(?:e|es|y|ing)', 'throat (?:is )?(?:tight|closing)', 'tight throat',
  'breathing (?:difficulty|difficulties|problems?|trouble)',
]);

const HIVES = terms('hives', ['荨麻疹', '风团', '风疹块', 'hives', 'urticaria', 'welts']);

export type AbcdeCriterion = keyof typeof ABCDE;

/** What the text affirms; the red flags and the scoring table read only this. */
export interface Findings {
  fever: boolean;
  rash: boolean;
  widespread: boolean;
  blistering: boolean;
  /** A sore or erosion of the mouth, eyes or genitals (or an inflamed eye surface). */
  mucosalSores: boolean;
  /** How many of mouth, eyes and genitals have sores. */
  mucosalSiteCount: number;
  pigmentedLesion: boolean;
  abcde: AbcdeCriterion[];
  redness: boolean;
  spreading: boolean;
  pain: boolean;
  facialSwelling: boolean;
  breathingTrouble: boolean;
  hives: boolean;
}

interface FindingsInput {
  symptoms: readonly string[];
  location?: readonly string[];
  duration?: string;
}

// Three separate body regions named as locations ("arms", "back", "legs") is a widespread eruption.
const WIDESPREAD_LOCATION_COUNT = 3;

export function readFindings(input: FindingsInput): Findings {
  const locations = (input.location ?? []).filter((place) => place.trim() !== '');
  const clauses = [...input.symptoms, ...locations, input.duration ?? ''].flatMap(splitClauses);
  const locationClauses = locations.flatMap(splitClauses);
  const any = (set: TermSet) => clauses.some((clause) => affirms(clause, set));

  const sitesWithSores = (Object.keys(MUCOSAL_SITE) as (keyof typeof MUCOSAL_SITE)[]).filter((site) => {
    const set = MUCOSAL_SITE[site];
    const inOneClause = clauses.some((clause) => affirms(clause, set) && affirms(clause, EROSION));
    const atLocation = locationClauses.some((clause) => affirms(clause, set)) && any(EROSION);
    const eyeSurface = site === 'eyes' && any(CONJUNCTIVITIS);
    return inOneClause || atLocation || eyeSurface;
  });

  return {
    fever: any(FEVER),
    rash: any(RASH),
    widespread: any(WIDESPREAD) || new Set(locations.map((place) => place.trim().toLowerCase())).size >= WIDESPREAD_LOCATION_COUNT,
    blistering: any(BLISTERING),
    mucosalSores: sitesWithSores.length > 0,
    mucosalSiteCount: sitesWithSores.length,
    pigmentedLesion: any(PIGMENTED_LESION),
    abcde: (Object.keys(ABCDE) as AbcdeCriterion[]).filter((criterion) => any(ABCDE[criterion])),
    redness: any(REDNESS),
    spreading: any(SPREADING),
    pain: any(PAIN),
    facialSwelling: any(FACIAL_SWELLING),
    breathingTrouble: any(BREATHING_TROUBLE),
    hives: any(HIVES),
  };
}
