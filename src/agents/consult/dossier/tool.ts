import { z } from 'zod';
import { ClinAgentError } from '../../../core/errors.js';
import type { ToolDefinition } from '../../../core/tools/registry.js';
import { withoutIdentifiers, withoutIdentifiersInModelText } from '../safety/identifiers.js';
import { buildDossier, type DossierContent, type DossierInput } from './build-dossier.js';
import type { DossierStore } from './dossier-store.js';
import { dossierMarkdown } from './export.js';

/** What the consult knows when the model asks for a dossier; the lead binds it to one consult. */
export type DossierSnapshot = Omit<DossierInput, 'patientData' | 'createdAt'>;

interface DossierToolDeps {
  snapshot(): Promise<DossierSnapshot>;
  store: Pick<DossierStore, 'save'>;
  runId: string;
  userId: string;
  /** For tests; the time the dossier records. */
  now?: () => Date;
}

const DossierArgs = z.object({
  patient_data: z
    .record(z.string(), z.unknown())
    .default({})
    .describe('What you know about the patient and the complaint (chief_complaint, symptoms, duration, age, allergies, ...). Never names, phone numbers, ID numbers or addresses: they are dropped.'),
});
export type DossierArgs = z.input<typeof DossierArgs>;

interface DossierToolResult {
  dossier_id: string;
  /** The record as Markdown without the transcript, which the model has already seen. */
  content: string;
}

/**
 * `generate_medical_dossier(patient_data)` (seed 003): the record is built from the consult's own state (medical
 * context, risk, diagnosis, medications, image findings, transcript), with patient_data filling what the state
 * lacks, so it says what the consult knows and not only what the model chose to pass. Saved on every call.
 */
export function createDossierTool(deps: DossierToolDeps): ToolDefinition<z.output<typeof DossierArgs>> {
  return {
    name: 'generate_medical_dossier',
    description:
      'Generate and save a structured medical record of this consult (chief complaint, history, patient information, findings, risk, assessment, plan, transcript). Call it when the consult has concluded or the patient asks for a record. Returns dossier_id and the record as Markdown.',
    schema: DossierArgs,
    // patient_data is what the model chose to pass: the record drops identifiers, and so does the call's trace.
    traceArguments: (args) => (typeof args === 'string' ? withoutIdentifiersInModelText(args) : withoutIdentifiers(args)),
    async run(args) {
      try {
        const content: DossierContent = buildDossier({ ...(await deps.snapshot()), patientData: args.patient_data, createdAt: (deps.now ?? (() => new Date()))() });
        const { dossierId } = await deps.store.save({ runId: deps.runId, userId: deps.userId, content });
        return { dossier_id: dossierId, content: dossierMarkdown(content, { transcript: false }) } satisfies DossierToolResult;
      } catch (error) {
        if (ClinAgentError.isInstance(error)) throw error;
        // Seed section 8: a failed tool must leave the consult able to go on, so the model is told how. The cause
        // stays out of the message: a failed query's text carries its parameters, the whole record among them.
        throw new ClinAgentError(
          'INTERNAL',
          'The medical record could not be generated or saved. Continue the consult without it and tell the patient the record can be requested again later.',
          { tool: 'generate_medical_dossier' },
          { cause: error },
        );
      }
    },
  };
}
