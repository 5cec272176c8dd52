import type { PatientInfo, RiskAssessment, RiskLevel } from '../types.js';
import { readFindings, type Findings } from './findings.js';
import { redFlagsOf } from './red-flags.js';

/**
 * The deterministic safety check of the consult: the same symptoms always give the same level, whatever the model
 * thinks. The score is the sum of the points below, capped at 100; the level follows from the score alone.
 *
 * | Finding                                                        | Points                                   |
 * |----------------------------------------------------------------|------------------------------------------|
 * | each emergency red flag (see red-flags.ts)                     | 70                                       |
 * | abcde_changing_pigmented_lesion                                | 35, +5 per further ABCDE sign (max +15)   |
 * | facial, lip or tongue swelling                                 | 25                                       |
 * | fever                                                          | 15                                       |
 * | blisters or skin peeling                                       | 15                                       |
 * | widespread rash                                                | 15                                       |
 * | sores of the mouth, eyes or genitals                           | 15                                       |
 * | spreading redness                                              | 10                                       |
 * | ... that is painful                                            | +10                                      |
 * | hives                                                          | 5                                        |
 * | pregnant                                                       | 10                                       |
 * | age under 2 or over 75                                         | 10                                       |
 *
 * | Level    | Score   | Advice                                                  |
 * |----------|---------|---------------------------------------------------------|
 * | urgent   | 70-100  | seek emergency care now                                 |
 * | high     | 35-69   | see a doctor promptly; a dermatologist within two weeks |
 * | moderate | 15-34   | see a doctor within a few days                          |
 * | low      | 0-14    | self-care or a routine appointment                      |
 *
 * Without an emergency red flag the score stops at 69: only an emergency sign makes a consult urgent, however many
 * lesser findings add up (a changing mole in an 80-year-old with a fever is high, not urgent). Every finding adds
 * points and none subtracts, so adding a symptom never lowers the level. Mild, local, long-standing complaints
 * (itch, a dry patch, a few spots for months) match none of the findings and score 0.
 */
export const POINTS = {
  emergencyRedFlag: 70,
  changingPigmentedLesion: 35,
  perFurtherAbcdeSign: 5,
  maxFurtherAbcde: 15,
  facialSwelling: 25,
  fever: 15,
  blistering: 15,
  widespreadRash: 15,
  mucosalSores: 15,
  spreadingRedness: 10,
  painfulSpreadingRedness: 10,
  hives: 5,
  pregnant: 10,
  ageExtreme: 10,
} as const;

export const LEVEL_THRESHOLDS: readonly { level: RiskLevel; minScore: number }[] = [
  { level: 'urgent', minScore: 70 },
  { level: 'high', minScore: 35 },
  { level: 'moderate', minScore: 15 },
  { level: 'low', minScore: 0 },
];

const MAX_SCORE = 100;
const MAX_SCORE_WITHOUT_EMERGENCY = 69;
const YOUNG_AGE = 2;
const OLD_AGE = 75;

export const ADVICE: Record<RiskLevel, string> = {
  urgent:
    'Seek emergency care now: go to an emergency department or call your local emergency number. Do not wait for this consultation to finish and do not start any treatment on your own first.',
  high:
    'See a doctor promptly, within two weeks at the latest (a dermatologist for a changing mole), and sooner if it gets worse. Seek emergency care at once if breathing becomes difficult, the face or lips swell, or a fever comes with a spreading rash or blisters.',
  moderate:
    'See a doctor within a few days. Seek emergency care at once if you develop difficulty breathing, swelling of the face or lips, a fever with a widespread or blistering rash, or rapidly spreading painful redness.',
  low:
    'This can usually be managed with self-care or a routine appointment. See a doctor if it does not improve within two weeks, keeps coming back, or if new signs appear such as fever, blisters or spreading redness.',
};

interface RiskContext {
  duration?: string;
  location?: string[];
}

function findingPoints(f: Findings): number {
  let points = 0;
  if (f.pigmentedLesion && f.abcde.length > 0) {
    points += POINTS.changingPigmentedLesion + Math.min(POINTS.maxFurtherAbcde, (f.abcde.length - 1) * POINTS.perFurtherAbcdeSign);
  }
  if (f.facialSwelling) points += POINTS.facialSwelling;
  if (f.fever) points += POINTS.fever;
  if (f.blistering) points += POINTS.blistering;
  if (f.rash && f.widespread) points += POINTS.widespreadRash;
  if (f.mucosalSores) points += POINTS.mucosalSores;
  if (f.redness && f.spreading) {
    points += POINTS.spreadingRedness;
    if (f.pain) points += POINTS.painfulSpreadingRedness;
  }
  if (f.hives) points += POINTS.hives;
  return points;
}

function patientPoints(patient: PatientInfo): number {
  let points = 0;
  if (patient.pregnant === true) points += POINTS.pregnant;
  if (typeof patient.age === 'number' && Number.isFinite(patient.age) && (patient.age < YOUNG_AGE || patient.age > OLD_AGE)) {
    points += POINTS.ageExtreme;
  }
  return points;
}

export function levelOf(score: number): RiskLevel {
  return (LEVEL_THRESHOLDS.find((threshold) => score >= threshold.minScore) ?? LEVEL_THRESHOLDS[LEVEL_THRESHOLDS.length - 1]!).level;
}

export function assessRisk(symptoms: readonly string[], patientInfo: PatientInfo = {}, context: RiskContext = {}): RiskAssessment {
  const findings = readFindings({ symptoms, location: context.location, duration: context.duration });
  const flags = redFlagsOf(findings);
  const emergencies = flags.filter((flag) => flag.emergency).length;
  const raw = emergencies * POINTS.emergencyRedFlag + findingPoints(findings) + patientPoints(patientInfo);
  const score = Math.min(raw, emergencies > 0 ? MAX_SCORE : MAX_SCORE_WITHOUT_EMERGENCY);
  const risk_level = levelOf(score);
  return {
    risk_level,
    score,
    red_flags: flags.map(({ id, description }) => ({ id, description })),
    advice: ADVICE[risk_level],
  };
}
