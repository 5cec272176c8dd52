import type { FaultTarget } from '../target.js';
import { nativeToolCall, promptOf, reply } from './shapes.js';

/** The soft rule of FAULT_SKILLS (fault-soft.yaml): what tells the judge's calls from other targets'. */
const INSTRUCTION = 'Judge whether the adverse event text is plausible';
import { createTrialProject } from './trial-project.js';

const VERDICT = { passed: true, reason: 'A mild headache after the first dose is plausible.', confidence: 0.9, evidence: 'mild headache after the first dose' };

/**
 * The soft-rule judge, through a QC run (POST /api/iit/projects/:projectId/qc-runs) of a skill whose only node is a
 * soft rule. A record the model could not judge is said to be unchecked (a review for a person, or a failed run
 * saying why); it is never COMPLETED as if it had been judged.
 */
export const softRuleTarget: FaultTarget = {
  id: 'soft-rule judge',
  covers: ['soft_rule'],
  engines: ['pglite', 'postgres'],
  // max_retries 2 of the skill plus the default 4 tool rounds.
  maxModelCalls: 6,
  turnLimitMs: 20_000,
  async setUp(server) {
    const project = await createTrialProject(server, 'faults-soft');
    const { token } = project.coordinator;
    const taskRunOf = async (qcRunId: string) => (await server.call('GET', `/api/iit/projects/${project.projectId}/task-runs?qcRunId=${qcRunId}`, token)).body.taskRuns?.[0];
    return {
      owns: (request) => promptOf(request).includes(INSTRUCTION),
      healthy: () => reply(JSON.stringify(VERDICT)),
      sample: () => VERDICT,
      embedJson: (json) => reply(json),
      say: (text) => reply(JSON.stringify({ ...VERDICT, reason: text })),
      callTool: (name, args) => nativeToolCall(name, args),
      loopTool: { name: 'read_clinical_data', arguments: { record_id: 'P003' } },
      async turn() {
        const run = await project.runQc('fault-soft', ['P003'], 20_000);
        if (run.status !== 202) return { status: run.status, message: run.body?.message };
        const taskRun = await taskRunOf(run.qcRunId!);
        const softStep = (taskRun?.steps as Array<{ node: string; outcome: string; detail?: { reason?: string; error?: string } }> | undefined)?.find((s) => s.node === 'soft');
        const message =
          taskRun?.status === 'SUSPENDED' ? taskRun.reviewRequest?.description
          : taskRun?.status === 'FAILED' ? taskRun.error
          : softStep?.detail?.reason ?? softStep?.detail?.error;
        return { status: run.status, message, detail: { taskRun, softStep, qcRun: run.body } };
      },
      async next() {
        const run = await project.runQc('fault-soft', ['P003'], 20_000);
        return { status: run.status === 202 ? 200 : run.status, message: run.body?.message };
      },
      async invariant(fault, outcome) {
        const taskRun = outcome.detail?.taskRun as { status: string; currentNode: string } | undefined;
        const softStep = outcome.detail?.softStep as { outcome: string } | undefined;
        if (!taskRun) return ['no task run was made for the record'];
        if (!fault.unusable) return [];
        const problems: string[] = [];
        if (taskRun.status === 'COMPLETED') problems.push(`the unchecked record is COMPLETED (soft step ${softStep?.outcome ?? 'missing'}, ended at ${taskRun.currentNode})`);
        if (softStep && (softStep.outcome === 'pass' || softStep.outcome === 'fail')) problems.push(`a verdict (${softStep.outcome}) was recorded from an unusable answer`);
        return problems;
      },
    };
  },
};
