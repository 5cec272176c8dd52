import type { PatientLanguage } from '../patient-language.js';
import type { RiskLevel } from '../types.js';
import { ADVICE } from './assess-risk.js';

/**
 * What the consult's answer leads with at each risk level, whatever the model wrote (seed 003 section 6: safety
 * above the model). The level comes from the deterministic check (assess-risk.ts); this table is the one place
 * that says what the patient is told about it, in their language, so the chat and the console's banner agree.
 *
 * | Level    | Leads the answer                                   | Model sentences left out after it                 |
 * |----------|----------------------------------------------------|----------------------------------------------------|
 * | urgent   | seek emergency care now                            | reassurance, and "no need to see a doctor"        |
 * | high     | see a dermatologist within two weeks               | reassurance, and "no need to see a doctor"        |
 * | moderate | see a doctor within a few days                     | "no need to see a doctor"                          |
 * | low      | nothing: the model's answer leads                  | nothing                                            |
 *
 * Reassurance is "harmless", "benign", "nothing to worry about", "不用担心", "良性" and the like: a sentence that
 * tells the patient the opposite of the level is not shown after the advice, since a patient reads the comfort and
 * not the warning. The rest of the model's answer (its questions, its explanation) follows the advice unchanged.
 */
interface LevelGuidance {
  /** Whether the advice is put above the model's answer. */
  leads: boolean;
  /** What the advice contradicts, so the model's sentences saying it are left out. */
  contradicts: ReadonlyArray<'reassurance' | 'no_doctor'>;
  advice: Record<PatientLanguage, string>;
}

export const LEVEL_GUIDANCE: Record<RiskLevel, LevelGuidance> = {
  urgent: {
    leads: true,
    contradicts: ['reassurance', 'no_doctor'],
    advice: {
      en: ADVICE.urgent,
      zh: '请立即就医：马上去医院急诊，或拨打当地急救电话（中国大陆为 120）。不要等本次咨询结束，也不要先自行用药。',
    },
  },
  high: {
    leads: true,
    contradicts: ['reassurance', 'no_doctor'],
    advice: {
      en: 'See a dermatologist within two weeks, and sooner if it gets worse. Seek emergency care at once if breathing becomes difficult, the face or lips swell, or a fever comes with a spreading rash or blisters.',
      zh: '请在两周内看皮肤科医生，如有加重请尽早就诊。如果出现呼吸困难、面部或嘴唇肿胀，或发烧伴皮疹扩散、起水疱，请立即去急诊。',
    },
  },
  moderate: {
    leads: true,
    contradicts: ['no_doctor'],
    advice: {
      en: ADVICE.moderate,
      zh: '请在几天内就医。如果出现呼吸困难、面部或嘴唇肿胀、发烧伴全身或起水疱的皮疹，或红肿疼痛迅速扩散，请立即去急诊。',
    },
  },
  low: {
    leads: false,
    contradicts: [],
    advice: {
      en: ADVICE.low,
      zh: '通常可以自我护理或常规就诊。如果两周内没有好转、反复发作，或出现发烧、水疱、红肿扩散等新情况，请就医。',
    },
  },
};

/** Marks the advice at the top of an answer; the console reads the lead by it (web/src/screens/consult/risk.ts). */
export const LEAD_MARK = '⚠️';

const CONTRADICTIONS: Record<LevelGuidance['contradicts'][number], RegExp> = {
  reassurance:
    /\b(?:harmless|benign|innocuous|nothing (?:serious|worrying|to worry about|to be (?:worried|concerned) about)|no (?:need|reason) (?:to|for) (?:worry|be (?:worried|concerned|alarmed)|panic|concern)|(?:don't|do not|needn't|need not) (?:worry|be (?:worried|concerned|alarmed))|not (?:serious|dangerous|worrying|concerning|a (?:concern|worry))|no cause for (?:concern|alarm|worry)|nothing to be concerned about)\b|不用担心|无需担心|不必担心|别担心|不要担心|没什么大碍|没有大碍|无大碍|无害|良性|问题不大|没什么问题|没有什么问题|不严重|不要紧|没关系|不危险/iu,
  no_doctor:
    /\b(?:no need (?:to|for) (?:see|visit|consult|go to|seeing|visiting) (?:a |the |your )?(?:doctor|dermatologist|physician|gp|clinic|hospital)|(?:don't|do not|needn't|need not) (?:need to )?(?:see|visit|consult) (?:a |the |your )?(?:doctor|dermatologist|physician|gp)|no (?:doctor|medical|clinic) (?:visit|attention|care) (?:is )?(?:needed|necessary|required))\b|不需要就医|无需就医|不用就医|不必就医|不用看医生|不需要看医生|不必看医生|无需看医生|不用去医院|不需要去医院/iu,
};

/** Sentences, each with its closing punctuation, Chinese or English; line breaks end one too. */
function sentencesOf(text: string): string[] {
  return text.match(/[^.!?。！？\n]+(?:[.!?。！？]+|\n+|$)/gu) ?? [];
}

/** The model's answer without the sentences the level's advice contradicts. */
export function withoutContradictions(answer: string, level: RiskLevel): string {
  const patterns = LEVEL_GUIDANCE[level].contradicts.map((kind) => CONTRADICTIONS[kind]);
  if (!patterns.length) return answer;
  return sentencesOf(answer)
    .filter((sentence) => !patterns.some((pattern) => pattern.test(sentence)))
    .join('')
    .trim();
}

/** The answer as the patient reads it: the level's advice first, then what is left of the model's words. */
export function leadWithGuidance(answer: string, level: RiskLevel, language: PatientLanguage): string {
  const guidance = LEVEL_GUIDANCE[level];
  if (!guidance.leads) return answer;
  const rest = withoutContradictions(answer, level);
  return rest ? `${LEAD_MARK} ${guidance.advice[language]}\n\n${rest}` : `${LEAD_MARK} ${guidance.advice[language]}`;
}
