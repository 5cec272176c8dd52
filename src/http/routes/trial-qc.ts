import type { FastifyPluginAsync } from 'fastify';
import type { QcService } from '../../trial/qc/qc-service.js';
import { requireUser } from '../access.js';
import { routeSchema } from '../../contract/index.js';

/** QC runs (start, progress) and task runs (get, review, the review queue). */
export const trialQcRoutes: FastifyPluginAsync<{ qc: QcService }> = async (app, { qc }) => {
  app.post<{ Params: { projectId: string }; Body: { skillId: string; recordIds?: string[] } }>('/api/iit/projects/:projectId/qc-runs', {
    config: { access: 'write' },
    schema: {
      tags: ['trial QC'], summary: 'Start a QC run of a skill over all (or the chosen) records; progress via GET /api/iit/qc-runs/:id',
      ...routeSchema('POST /api/iit/projects/:projectId/qc-runs'),
    },
  }, async (request, reply) => reply.status(202).send(await qc.startQcRun(requireUser(request), request.params.projectId, request.body.skillId, request.body.recordIds)));

  app.get<{ Params: { projectId: string } }>('/api/iit/projects/:projectId/qc-runs', {
    schema: { tags: ['trial QC'], summary: 'QC runs of a project, newest first, with progress', ...routeSchema('GET /api/iit/projects/:projectId/qc-runs') },
  }, async (request) => ({ qcRuns: await qc.qcRuns(requireUser(request), request.params.projectId) }));

  app.get<{ Params: { id: string } }>('/api/iit/qc-runs/:id', {
    schema: { tags: ['trial QC'], summary: 'Progress of one QC run (done / total / failed)', ...routeSchema('GET /api/iit/qc-runs/:id') },
  }, async (request) => qc.qcRun(requireUser(request), request.params.id));

  app.get<{ Params: { projectId: string }; Querystring: { status?: string; qcRunId?: string; page?: number; pageSize?: number } }>('/api/iit/projects/:projectId/task-runs', {
    schema: {
      tags: ['trial QC'], summary: 'One page of a project\'s task runs with the total, each with its findings; status=SUSPENDED is the review queue (oldest first)',
      ...routeSchema('GET /api/iit/projects/:projectId/task-runs'),
    },
  }, async (request) => {
    const { status, qcRunId, page, pageSize } = request.query;
    return qc.taskRunPage(requireUser(request), { projectId: request.params.projectId, qcRunId, statuses: status ? [status] : undefined, page, pageSize });
  });

  app.post<{ Params: { projectId: string }; Body: { decision: 'approve' | 'reject'; comment?: string; items: Array<{ taskRunId: string; dataHash?: string; queryIds?: string[] }> } }>('/api/iit/projects/:projectId/reviews', {
    config: { access: 'write' },
    schema: {
      tags: ['trial QC'], summary: 'Approve or reject a selection of the review queue with one comment: whole runs, or single findings of a run; each run is decided on its own and reported',
      ...routeSchema('POST /api/iit/projects/:projectId/reviews'),
    },
  }, async (request) => qc.decideReviews(requireUser(request), request.params.projectId, request.body.decision, request.body.comment ?? '', request.body.items));

  app.get<{ Params: { id: string } }>('/api/iit/task-runs/:id', {
    schema: { tags: ['trial QC'], summary: 'One task run with every step it took', ...routeSchema('GET /api/iit/task-runs/:id') },
  }, async (request) => qc.taskRun(requireUser(request), request.params.id));

  app.post<{ Params: { id: string }; Body: { decision: 'approve' | 'reject'; comment?: string; dataHash?: string } }>('/api/iit/task-runs/:id/review', {
    config: { access: 'write' },
    schema: {
      tags: ['trial QC'], summary: 'Approve or reject a run suspended for human review; the run continues as a job',
      ...routeSchema('POST /api/iit/task-runs/:id/review'),
    },
  }, async (request) => qc.review(requireUser(request), request.params.id, request.body.decision, request.body.comment ?? '', request.body.dataHash));
};
