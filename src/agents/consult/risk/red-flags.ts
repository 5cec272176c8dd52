import type { RedFlag } from '../types.js';
import type { Findings } from './findings.js';

/**
 * The red flags of a dermatology triage. `emergency` flags mean "seek emergency care now" (each one alone makes a
 * consult urgent); the changing pigmented lesion means "see a dermatologist within two weeks" (high). The
 * combinations follow UK and Chinese primary-care triage guidance: fever with a widespread or blistering rash
 * (serious drug reaction, SJS/TEN, meningococcal or other severe infection), mucosal sores with a rash or fever
 * (SJS/TEN), the ABCDE signs of melanoma, a spreading painful redness with fever (cellulitis with systemic
 * illness, necrotising fasciitis), swelling of the face or lips with breathing trouble (angioedema, anaphylaxis).
 */
interface RedFlagRule extends RedFlag {
  emergency: boolean;
  applies(findings: Findings): boolean;
}

export const RED_FLAG_RULES: readonly RedFlagRule[] = [
  {
    id: 'fever_with_widespread_rash',
    description: 'Fever with a widespread rash: possible severe drug reaction or serious infection.',
    emergency: true,
    applies: (f) => f.fever && f.rash && f.widespread,
  },
  {
    id: 'fever_with_blistering_rash',
    description: 'Fever with blisters or skin peeling: possible Stevens-Johnson syndrome / toxic epidermal necrolysis or severe infection.',
    emergency: true,
    applies: (f) => f.fever && f.blistering,
  },
  {
    // A single mouth ulcer on its own is common and harmless; sores of the mouth, eyes or genitals together with
    // a rash, blisters or fever, or at two of those sites, are how SJS/TEN presents.
    id: 'mucosal_involvement',
    description: 'Sores of the mouth, eyes or genitals together with a rash, blisters or fever: possible Stevens-Johnson syndrome.',
    emergency: true,
    applies: (f) => f.mucosalSores && (f.rash || f.blistering || f.fever || f.mucosalSiteCount >= 2),
  },
  {
    id: 'abcde_changing_pigmented_lesion',
    description: 'A mole or pigmented spot with ABCDE warning signs (asymmetry, irregular border, colour change, diameter over 6 mm, growing or bleeding): possible melanoma.',
    emergency: false,
    applies: (f) => f.pigmentedLesion && f.abcde.length > 0,
  },
  {
    id: 'spreading_painful_redness_with_fever',
    description: 'Spreading, painful redness with fever: possible cellulitis with systemic infection or necrotising fasciitis.',
    emergency: true,
    applies: (f) => f.redness && f.spreading && f.pain && f.fever,
  },
  {
    id: 'facial_swelling_with_breathing_trouble',
    description: 'Swelling of the face, lips or tongue with difficulty breathing: possible angioedema or anaphylaxis.',
    emergency: true,
    applies: (f) => f.facialSwelling && f.breathingTrouble,
  },
  {
    // Difficulty breathing in a skin consult (with hives, after a drug or a sting) is anaphylaxis until shown
    // otherwise, swelling or not.
    id: 'breathing_difficulty',
    description: 'Difficulty breathing: possible anaphylaxis or airway swelling.',
    emergency: true,
    applies: (f) => f.breathingTrouble && !f.facialSwelling,
  },
];

export function redFlagsOf(findings: Findings): RedFlagRule[] {
  return RED_FLAG_RULES.filter((rule) => rule.applies(findings));
}
