import type { User } from '../../../core/auth/users.js';
import { waitFor } from '../../wait-for.js';
import type { FaultServer } from '../fault-server.js';

const HEADER =
  'Variable / Field Name,Form Name,Section Header,Field Type,Field Label,"Choices, Calculations, OR Slider Labels",Field Note,Text Validation Type OR Show Slider Number,Text Validation Min,Text Validation Max,Identifier?,Branching Logic (Show field only if...),Required Field?,Custom Alignment,Question Number (surveys only),Matrix Group Name,Matrix Ranking?,Field Annotation';
const DICTIONARY = [
  HEADER,
  'record_id,enrolment,,text,Subject ID,,,,,,,,,,,,,',
  'ecog,enrolment,,text,ECOG,,,integer,0,5,,,,,,,,',
  'age,enrolment,,text,Age,,,integer,0,200,,,,,,,,',
  'ae_text,enrolment,,notes,Adverse event,,,,,,,,,,,,,',
].join('\n');
/** P009's age breaks the hard rule, so the project has an open query for the checks that none gets closed. */
const RECORDS = ['record_id,ecog,age,ae_text', 'P003,1,61,mild headache after the first dose', 'P009,0,150,none'].join('\n');

/** The QC skills of the suite: a hard rule that opens a query, and a soft rule the judge decides. */
export const FAULT_SKILLS: Record<string, string> = {
  'fault-hard.yaml': `id: fault-hard
name: Fault suite hard checks
description: Age at most 120
start_node: ages
nodes:
  ages:
    type: hard_rule
    rules:
      - { id: age-max, field: age, logic: { "<=": [{ var: age }, 120] }, message: "Age must be at most 120", severity: error }
    on_pass: end_ok
    on_fail: end_flagged
`,
  'fault-soft.yaml': `id: fault-soft
name: Fault suite soft check
description: The adverse event text is plausible
start_node: soft
nodes:
  soft:
    type: soft_instruction
    instruction: Judge whether the adverse event text is plausible for this subject.
    field: ae_text
    max_retries: 2
    on_pass: end_ok
    on_fail: end_flagged
`,
};

interface TrialProject {
  projectId: string;
  coordinator: { user: User; token: string };
  /** Runs a skill over records through the API and waits until no task run is pending or running. */
  runQc(skillId: string, recordIds: string[], limitMs?: number): Promise<{ status: number; qcRunId?: string; body: any }>;
}

/** A project of its own for one target (a coordinator, two records, an open query), so targets never share state. */
export async function createTrialProject(server: FaultServer, projectId: string): Promise<TrialProject> {
  const { ctx } = server;
  const coordinator = await ctx.users.create({ name: `${projectId}-coordinator`, role: 'coordinator' });
  await ctx.users.createProject({ id: projectId, name: projectId });
  await ctx.users.addMember(projectId, coordinator.user.id);
  await ctx.trial.imports.importCsv(coordinator.user, projectId, { dictionaryCsv: DICTIONARY, recordsCsv: RECORDS });
  const runQc: TrialProject['runQc'] = async (skillId, recordIds, limitMs = 30_000) => {
    const started = await server.call('POST', `/api/iit/projects/${projectId}/qc-runs`, coordinator.token, { skillId, recordIds });
    if (started.status !== 202) return { status: started.status, body: started.body };
    const qcRunId = started.body.id as string;
    const settled = await waitFor(async () => {
      const progress = await server.call('GET', `/api/iit/qc-runs/${qcRunId}`, coordinator.token);
      return progress.body.pending + progress.body.running === 0 ? progress : undefined;
    }, `QC run of ${skillId} to settle`, limitMs, 100);
    return { status: started.status, qcRunId, body: settled.body };
  };
  const hard = await runQc('fault-hard', ['P009']);
  if (hard.status !== 202) throw new Error(`the fault suite's hard QC run could not start: ${JSON.stringify(hard.body)}`);
  return { projectId, coordinator, runQc };
}
