import type { FastifyPluginAsync } from 'fastify';
import type { StagedAgentService, StagedView } from '../../runtime/staged/staged-agent-service.js';
import { compileProtocolChecks, verifyProtocolChecks } from '../../agents/protocol/checks/index.js';
import { protocolDocx, protocolMarkdown } from '../../agents/protocol/export/index.js';
import { PROTOCOL_AGENT_ID, protocolContextOf, protocolContextResponse, protocolDraftOf } from '../../agents/protocol/protocol-agent.js';
import {
  routeSchema,
  type ActionCallbackRequest,
  type PatchProtocolContextRequest,
  type ProtocolChatRequest,
  type ProtocolContextResponse,
  type StartProtocolRequest,
} from '../../contract/index.js';
import { ClinAgentError } from '../../core/errors.js';
import type { TraceStore } from '../../core/trace/store.js';
import { compileRules } from '../../trial/rules/index.js';
import { requireUser } from '../access.js';
import { streamRun } from '../event-stream.js';

type ConversationParams = { Params: { conversationId: string } };
const tags = ['protocol agent'];
const AGENT = PROTOCOL_AGENT_ID;

const contextOf = (view: StagedView): ProtocolContextResponse => protocolContextResponse(view);

/** A file name from the protocol's title: letters (any script), digits and dashes, never a path or a header break. */
function fileNameOf(title: string, extension: string): string {
  const base = title.normalize('NFC').replace(/[^\p{L}\p{N}]+/gu, '-').replace(/^-+|-+$/g, '').slice(0, 80) || 'protocol';
  return `${base}.${extension}`;
}

/**
 * The Protocol Agent (seed 001 section 4): from a vague idea to a protocol draft, stage by stage. Writers (PIs,
 * coordinators, admins) draft protocols, viewers read only, like everywhere else; each protocol is its owner's
 * (anyone else gets 404). Linking one to a trial project needs membership.
 */
export const protocolAgentRoutes: FastifyPluginAsync<{ staged: StagedAgentService; trace: TraceStore }> = async (app, { staged, trace }) => {
  app.post<{ Body: StartProtocolRequest }>(
    '/api/aia/protocol-agent/conversations',
    { config: { access: 'write' }, schema: { tags, summary: 'Start a protocol at its first stage', ...routeSchema('POST /api/aia/protocol-agent/conversations') } },
    async (request, reply) => {
      // The conversation store checks the caller is a member of projectId (404 otherwise) before anything is written.
      const view = await staged.start(requireUser(request), AGENT, request.body);
      return reply.code(201).send({ conversationId: view.run.conversationId, currentStage: view.state.currentStage, stageProgress: staged.stageProgress(view) });
    },
  );

  app.get('/api/aia/protocol-agent/conversations', { schema: { tags, summary: 'Your protocols, most recently active first', ...routeSchema('GET /api/aia/protocol-agent/conversations') } }, async (request) => {
    const protocols = await staged.list(requireUser(request), AGENT);
    return { protocols: protocols.map((p) => ({ conversationId: p.conversationId, title: p.state.title, currentStage: p.state.currentStage, completedStages: p.state.completedStages, updatedAt: p.updatedAt.toISOString() })) };
  });

  app.post<{ Body: ProtocolChatRequest }>(
    '/api/aia/protocol-agent/chat',
    { config: { access: 'write' }, schema: { tags, summary: 'Send a message; the answer, what it recorded, the stage and its action cards', ...routeSchema('POST /api/aia/protocol-agent/chat') } },
    async (request) => staged.message(requireUser(request), AGENT, request.body.conversationId, request.body.message, { attachments: request.body.attachments }),
  );

  app.post<{ Body: ProtocolChatRequest }>(
    '/api/aia/protocol-agent/chat/stream',
    { config: { access: 'write' }, schema: { tags, summary: 'The same, streamed as server-sent events; the ChatResponse is the last event', ...routeSchema('POST /api/aia/protocol-agent/chat/stream') } },
    async (request, reply) => {
      const user = requireUser(request);
      await streamRun(reply, request, (onEvent, signal) => staged.message(user, AGENT, request.body.conversationId, request.body.message, { onEvent, signal, attachments: request.body.attachments }));
    },
  );

  app.post<{ Body: { conversationId: string } }>(
    '/api/aia/protocol-agent/stage/complete',
    { config: { access: 'write' }, schema: { tags, summary: 'Confirm the current stage; refused (success false) with each missing item named', ...routeSchema('POST /api/aia/protocol-agent/stage/complete') } },
    async (request) => staged.completeStage(requireUser(request), AGENT, request.body.conversationId),
  );

  app.get<ConversationParams>(
    '/api/aia/protocol-agent/context/:conversationId',
    { schema: { tags, summary: 'The protocol so far: stages, context, cards and SPIRIT 2025 coverage', ...routeSchema('GET /api/aia/protocol-agent/context/:conversationId') } },
    async (request) => contextOf(await staged.open(requireUser(request), AGENT, request.params.conversationId)),
  );

  app.patch<ConversationParams & { Body: PatchProtocolContextRequest }>(
    '/api/aia/protocol-agent/context/:conversationId',
    { config: { access: 'write' }, schema: { tags, summary: 'Edit a context field (its keys are added to it); 400 names an unknown field or key', ...routeSchema('PATCH /api/aia/protocol-agent/context/:conversationId') } },
    async (request) => contextOf(await staged.patchContext(requireUser(request), AGENT, request.params.conversationId, request.body.field, request.body.value)),
  );

  app.post<{ Body: ActionCallbackRequest }>(
    '/api/aia/protocol-agent/action-callback',
    { config: { access: 'write' }, schema: { tags, summary: "An action card's result (the calculator's), recorded through the card's resultMapping", ...routeSchema('POST /api/aia/protocol-agent/action-callback') } },
    async (request) => {
      const { applied, view } = await staged.actionCallback(requireUser(request), AGENT, request.body.conversationId, request.body.cardId, request.body.result);
      return { applied, context: contextOf(view) };
    },
  );

  app.get<{ Params: { traceId: string } }>(
    '/api/aia/protocol-agent/trace/:traceId',
    { schema: { tags, summary: "One message's trace: query analysis, planning, execution, extraction, reflexion, response", ...routeSchema('GET /api/aia/protocol-agent/trace/:traceId') } },
    async (request) => {
      const user = requireUser(request);
      // Only the caller's own protocol messages: project membership does not open someone else's drafting.
      const found = await trace.get(request.params.traceId, { userId: user.id, projectIds: [] });
      if (!found || found.kind !== 'staged_agent' || found.name !== AGENT || found.userId !== user.id) {
        throw new ClinAgentError('NOT_FOUND', `Trace "${request.params.traceId}" does not exist. Each chat answer names its traceId; a trace is visible only to the protocol's owner.`, { traceId: request.params.traceId });
      }
      return found;
    },
  );

  app.get<ConversationParams & { Querystring: { format?: 'md' | 'docx' } }>(
    '/api/aia/protocol-agent/export/:conversationId',
    { schema: { tags, summary: 'Download the protocol draft as Markdown or DOCX, with what is missing marked', ...routeSchema('GET /api/aia/protocol-agent/export/:conversationId') } },
    async (request, reply) => {
      // Made (and access checked) before the download headers are set, so a refusal is plain JSON.
      const draft = protocolDraftOf(await staged.get(requireUser(request), AGENT, request.params.conversationId));
      if (request.query.format === 'docx') {
        const docx = await protocolDocx(draft);
        return reply
          .type('application/vnd.openxmlformats-officedocument.wordprocessingml.document')
          .header('content-disposition', `attachment; filename="protocol.docx"; filename*=UTF-8''${encodeURIComponent(fileNameOf(draft.title, 'docx'))}`)
          .send(docx);
      }
      return reply
        .type('text/markdown; charset=utf-8')
        .header('content-disposition', `attachment; filename="protocol.md"; filename*=UTF-8''${encodeURIComponent(fileNameOf(draft.title, 'md'))}`)
        .send(protocolMarkdown(draft));
    },
  );

  app.get<ConversationParams>(
    '/api/aia/protocol-agent/checks/:conversationId',
    { schema: { tags, summary: "The protocol's eligibility criteria and visit windows as a QC skill, with generated test records run through the rule engine", ...routeSchema('GET /api/aia/protocol-agent/checks/:conversationId') } },
    async (request) => {
      const view = await staged.get(requireUser(request), AGENT, request.params.conversationId);
      const compiled = compileProtocolChecks(protocolContextOf(view), { skillId: `protocol-${request.params.conversationId.slice(0, 8)}`, name: `${view.state.title}: eligibility and visit windows` });
      const verification = verifyProtocolChecks(compiled, { compileRules });
      return {
        skillId: compiled.skill.id,
        yaml: compiled.yaml,
        rules: compiled.rules.map((r) => ({ ruleId: r.ruleId, source: r.source, criterion: r.criterion })),
        skipped: compiled.skipped.map((s) => ({ text: s.text, reason: s.reason })),
        verification: { passed: verification.passed, results: verification.results.map((r) => ({ ...r, record: r.record })) },
      };
    },
  );
};
