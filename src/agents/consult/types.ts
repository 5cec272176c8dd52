/**
 * The consult's own vocabulary (seed 003): the medical context the model maintains itself, the risk the safety
 * check computes, what the formulary and the dossier hold. Snake_case where the seed's JSON decisions and tool
 * interfaces name the fields, so a model reading the seed's prompt writes what we read.
 */

export interface PatientInfo {
  age?: number;
  sex?: 'female' | 'male' | 'other';
  pregnant?: boolean;
  breastfeeding?: boolean;
  /** Drug or class names the patient is allergic to ("penicillin", "青霉素", "sulfonamides"). */
  allergies?: string[];
  [key: string]: unknown;
}

/** Kept by the model through `medical_context_update` (merged on every decision), read by the safety check. */
export interface MedicalContext {
  symptoms?: string[];
  /** Where on the body. */
  location?: string[];
  duration?: string;
  triggers?: string[];
  patient_info?: PatientInfo;
  missing_info?: string[];
  suspected_conditions?: string[];
  image_findings?: string[];
  [key: string]: unknown;
}

export type RiskLevel = 'low' | 'moderate' | 'high' | 'urgent';

export interface RedFlag {
  /** Stable id, e.g. `fever_with_widespread_rash`, `abcde_changing_lesion`. */
  id: string;
  /** What was found, in plain words. */
  description: string;
}

/** `assess_risk`'s answer. */
export interface RiskAssessment {
  risk_level: RiskLevel;
  /** 0..100, documented in the scoring table. */
  score: number;
  red_flags: RedFlag[];
  /** What the patient should do at this level ("Seek emergency care now"). */
  advice: string;
}

export interface MedicationOption {
  name: string;
  class: string;
  route: 'topical' | 'oral' | 'other';
  dosage: string;
  notes?: string;
}

/** `search_medication`'s answer: what may be offered, and why each excluded drug was excluded. */
export interface MedicationSearch {
  medications: MedicationOption[];
  warnings: string[];
}
