import type { FastifyPluginAsync } from 'fastify';
import type { TrialQc } from '../../trial/trial-qc.js';
import { requireUser } from '../access.js';
import { errorResponses, uuidParams, uuidString } from '../schemas.js';

const progressBody = {
  type: 'object',
  properties: {
    id: { type: 'string' }, projectId: { type: 'string' }, skillId: { type: 'string' }, status: { type: 'string' }, trigger: { type: 'string' }, createdBy: { type: 'string' },
    createdAt: { type: 'string' }, finishedAt: { type: ['string', 'null'] }, total: { type: 'integer' }, done: { type: 'integer' }, pending: { type: 'integer' },
    running: { type: 'integer' }, suspended: { type: 'integer' }, completed: { type: 'integer' }, failed: { type: 'integer' },
    recovering: { type: 'integer', description: 'runs picked up again after their worker stopped' },
  },
} as const;

const taskRunBody = {
  type: 'object',
  properties: {
    id: { type: 'string' }, projectId: { type: 'string' }, qcRunId: { type: ['string', 'null'] }, skillId: { type: 'string' }, recordId: { type: 'string' }, status: { type: 'string' },
    currentNode: { type: 'string' }, steps: { type: 'array', items: { type: 'object', additionalProperties: true } }, review: { type: ['object', 'null'], additionalProperties: true },
    error: { type: ['string', 'null'] }, createdAt: { type: 'string' }, updatedAt: { type: 'string' }, completedAt: { type: ['string', 'null'] },
    reviewDescription: { type: ['string', 'null'], description: 'for a suspended run, what the reviewer is asked to check' },
    reviewRequest: { type: ['object', 'null'], additionalProperties: true, description: 'why the run waits for a person (a review node, or a soft rule the model could not judge, with the technical reason)' },
    recoveredAt: { type: ['string', 'null'] },
  },
} as const;

const projectParams = { type: 'object', properties: { projectId: { type: 'string' } }, required: ['projectId'] } as const;

/** Skills, QC runs (start, progress) and task runs (get, review). */
export const trialQcRoutes: FastifyPluginAsync<{ qc: TrialQc }> = async (app, { qc }) => {
  app.get('/api/iit/skills', {
    schema: {
      tags: ['trial QC'], summary: 'QC skills (SOP flowcharts) with their schedule and next run',
      response: { 200: { type: 'object', properties: { skills: { type: 'array', items: { type: 'object', properties: { id: { type: 'string' }, name: { type: 'string' }, description: { type: 'string' }, projects: { type: ['array', 'null'], items: { type: 'string' } }, schedule: { type: ['string', 'null'] }, nextRun: { type: ['string', 'null'] }, nodes: { type: 'integer' } } } } } }, ...errorResponses },
    },
  }, async () => ({ skills: qc.skills() }));

  app.post<{ Params: { projectId: string }; Body: { skillId: string; recordIds?: string[] } }>('/api/iit/projects/:projectId/qc-runs', {
    config: { access: 'write' },
    schema: {
      tags: ['trial QC'], summary: 'Start a QC run of a skill over all (or the chosen) records; progress via GET /api/iit/qc-runs/:id',
      params: projectParams,
      body: { type: 'object', properties: { skillId: { type: 'string', minLength: 1 }, recordIds: { type: 'array', items: { type: 'string', minLength: 1 }, maxItems: 100_000 } }, required: ['skillId'], additionalProperties: false },
      response: { 202: progressBody, ...errorResponses },
    },
  }, async (request, reply) => {
    const user = requireUser(request);
    await qc.assertMember(request.params.projectId, user);
    return reply.status(202).send(await qc.startQcRun(request.params.projectId, request.body.skillId, request.body.recordIds, user.name));
  });

  app.get<{ Params: { projectId: string } }>('/api/iit/projects/:projectId/qc-runs', {
    schema: { tags: ['trial QC'], summary: 'QC runs of a project, newest first, with progress', params: projectParams, response: { 200: { type: 'object', properties: { qcRuns: { type: 'array', items: progressBody } } }, ...errorResponses } },
  }, async (request) => {
    await qc.assertMember(request.params.projectId, requireUser(request));
    return { qcRuns: await qc.qcRuns(request.params.projectId) };
  });

  app.get<{ Params: { id: string } }>('/api/iit/qc-runs/:id', {
    schema: { tags: ['trial QC'], summary: 'Progress of one QC run (done / total / failed)', params: uuidParams('id'), response: { 200: progressBody, ...errorResponses } },
  }, async (request) => {
    const progress = await qc.qcRun(request.params.id);
    await qc.assertMember(progress.projectId, requireUser(request));
    return progress;
  });

  app.get<{ Params: { projectId: string }; Querystring: { status?: string; qcRunId?: string } }>('/api/iit/projects/:projectId/task-runs', {
    schema: {
      tags: ['trial QC'], summary: 'Task runs of a project; status=SUSPENDED is the review queue',
      params: projectParams,
      querystring: { type: 'object', properties: { status: { type: 'string', enum: ['PENDING', 'RUNNING', 'SUSPENDED', 'COMPLETED', 'FAILED'] }, qcRunId: uuidString }, additionalProperties: false },
      response: { 200: { type: 'object', properties: { taskRuns: { type: 'array', items: taskRunBody } } }, ...errorResponses },
    },
  }, async (request) => {
    await qc.assertMember(request.params.projectId, requireUser(request));
    return { taskRuns: await qc.taskRuns(request.params.projectId, { qcRunId: request.query.qcRunId, statuses: request.query.status ? [request.query.status] : undefined }) };
  });

  app.get<{ Params: { id: string } }>('/api/iit/task-runs/:id', {
    schema: { tags: ['trial QC'], summary: 'One task run with every step it took', params: uuidParams('id'), response: { 200: taskRunBody, ...errorResponses } },
  }, async (request) => {
    const run = await qc.taskRun(request.params.id);
    await qc.assertMember(run.projectId, requireUser(request));
    return run;
  });

  app.post<{ Params: { id: string }; Body: { decision: 'approve' | 'reject'; comment?: string } }>('/api/iit/task-runs/:id/review', {
    config: { access: 'write' },
    schema: {
      tags: ['trial QC'], summary: 'Approve or reject a run suspended for human review; the run continues as a job',
      params: uuidParams('id'),
      body: { type: 'object', properties: { decision: { type: 'string', enum: ['approve', 'reject'] }, comment: { type: 'string', maxLength: 5000 } }, required: ['decision'], additionalProperties: false },
      response: { 200: taskRunBody, ...errorResponses },
    },
  }, async (request) => {
    const user = requireUser(request);
    const run = await qc.taskRun(request.params.id);
    await qc.assertMember(run.projectId, user);
    return qc.review(request.params.id, request.body.decision, user.name, request.body.comment ?? '');
  });
};
