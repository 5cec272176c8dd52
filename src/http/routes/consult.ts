import type { FastifyPluginAsync } from 'fastify';
import type { ConsultService, IncomingImage } from '../../agents/consult/consult-service.js';
import { dossierDocx, dossierJson, dossierMarkdown } from '../../agents/consult/dossier/index.js';
import { routeSchema, type ConsultMessageRequest, type ConsultSession, type StartConsultRequest } from '../../contract/index.js';
import { ClinAgentError } from '../../core/errors.js';
import { requireUser } from '../access.js';
import { streamRun } from '../event-stream.js';
import type { Upload } from '../multipart-body.js';

type SessionParams = { Params: { id: string } };
const tags = ['consult'];

/** The image of a message, from JSON (`{data, name?}`) or a multipart file part. */
function imageOf(body: ConsultMessageRequest): IncomingImage | undefined {
  const image = body.image as { data?: unknown; name?: string; filename?: string } | undefined;
  if (!image) return undefined;
  if (Buffer.isBuffer(image.data)) return { bytes: image.data, name: (image as unknown as Upload).filename };
  if (typeof image.data === 'string') return { base64: image.data, name: image.name };
  throw new ClinAgentError('VALIDATION_FAILED', 'image: send {data: "<base64 or data: URL>"} in JSON, or a multipart file part named image.', { field: 'image' });
}

/**
 * The dermatology consult (seed 003). Writers consult (viewers read only, as everywhere); a consult is its owner's:
 * anyone else gets 404, as for a consult that does not exist.
 */
export const consultRoutes: FastifyPluginAsync<{ consult: ConsultService }> = async (app, { consult }) => {
  // An image in JSON is base64 (4/3 of its bytes): room for twice the largest image, so one somewhat too large
  // reaches the image check and is refused with its size and the limit rather than a bare "body too large".
  const bodyLimit = Math.ceil(consult.maxImageBytes / 3) * 4 * 2 + 256 * 1024;
  app.post<{ Body: StartConsultRequest }>(
    '/api/consult/sessions',
    { config: { access: 'write' }, schema: { tags, summary: 'Start a consult', ...routeSchema('POST /api/consult/sessions') } },
    async (request, reply) => reply.code(201).send(await consult.start(requireUser(request), request.body ?? {})),
  );

  app.get('/api/consult/sessions', { schema: { tags, summary: 'Your consults, most recently active first', ...routeSchema('GET /api/consult/sessions') } }, async (request) => {
    const sessions = await consult.list(requireUser(request));
    return { sessions: sessions.map((s) => ({ sessionId: s.sessionId, title: s.state.title, status: s.state.status, riskLevel: s.state.risk.risk_level, updatedAt: s.updatedAt.toISOString() })) };
  });

  app.get<SessionParams>('/api/consult/sessions/:id', { schema: { tags, summary: "The consult's state: turns, medical context, risk, attachments, dossier", ...routeSchema('GET /api/consult/sessions/:id') } }, async (request): Promise<ConsultSession> => {
    const { run, state, dossier } = await consult.get(requireUser(request), request.params.id);
    return {
      sessionId: run.conversationId!, title: state.title, status: state.status, medicalContext: state.medicalContext, riskLevel: state.risk.risk_level, redFlags: state.risk.red_flags,
      quickOptions: state.quickOptions, turns: state.turns, attachments: state.attachments, tokensUsed: state.tokensUsed, tokenBudget: consult.tokenBudget, dossier, updatedAt: state.updatedAt,
    };
  });

  app.post<SessionParams & { Body: ConsultMessageRequest }>(
    '/api/consult/sessions/:id/messages',
    { bodyLimit, config: { access: 'write' }, schema: { tags, summary: 'Send a message (and an image: JSON base64 or a multipart file); the reply, quick options, risk level. A resend with the same clientMessageId is taken once and gets that reply', consumes: ['application/json', 'multipart/form-data'], ...routeSchema('POST /api/consult/sessions/:id/messages') } },
    async (request) => consult.message(requireUser(request), request.params.id, request.body.message, { image: imageOf(request.body), clientMessageId: request.body.clientMessageId }),
  );

  app.post<SessionParams & { Body: ConsultMessageRequest }>(
    '/api/consult/sessions/:id/messages/stream',
    { bodyLimit, config: { access: 'write' }, schema: { tags, summary: 'The same, streamed as server-sent events; the reply is the last event', consumes: ['application/json', 'multipart/form-data'], ...routeSchema('POST /api/consult/sessions/:id/messages/stream') } },
    async (request, reply) => {
      const user = requireUser(request);
      const image = imageOf(request.body);
      await streamRun(reply, request, (onEvent, signal) => consult.message(user, request.params.id, request.body.message, { image, clientMessageId: request.body.clientMessageId, onEvent, signal }));
    },
  );

  app.get<SessionParams & { Querystring: { format?: 'json' | 'md' | 'docx' } }>(
    '/api/consult/sessions/:id/dossier',
    { schema: { tags, summary: 'The consult record (dossier) as JSON, Markdown or DOCX', ...routeSchema('GET /api/consult/sessions/:id/dossier') } },
    async (request, reply) => {
      // Made (and access checked) before the download headers are set, so a refusal is plain JSON.
      const dossier = await consult.dossier(requireUser(request), request.params.id);
      const name = `consult-${request.params.id.slice(0, 8)}`;
      if (request.query.format === 'md') return reply.type('text/markdown; charset=utf-8').header('content-disposition', `attachment; filename="${name}.md"`).send(dossierMarkdown(dossier.content));
      if (request.query.format === 'docx') {
        return reply.type('application/vnd.openxmlformats-officedocument.wordprocessingml.document').header('content-disposition', `attachment; filename="${name}.docx"`).send(await dossierDocx(dossier.content));
      }
      return reply.type('application/json; charset=utf-8').send(dossierJson(dossier.content));
    },
  );

  app.get<{ Params: { id: string; attachmentId: string } }>(
    '/api/consult/sessions/:id/attachments/:attachmentId',
    { schema: { tags, summary: 'An image uploaded in the consult (for its preview)', ...routeSchema('GET /api/consult/sessions/:id/attachments/:attachmentId') } },
    async (request, reply) => {
      const image = await consult.attachment(requireUser(request), request.params.id, request.params.attachmentId);
      // Served only as the image it was checked to be (nosniff is on every response: server.ts), and with no script
      // if opened on its own.
      return reply
        .type(image.mimeType)
        .header('cache-control', 'private, max-age=3600')
        .header('content-security-policy', "default-src 'none'; img-src 'self'; sandbox")
        .header('content-disposition', `inline; filename="consult-image.${image.mimeType.slice('image/'.length)}"`)
        .send(image.bytes);
    },
  );
};
