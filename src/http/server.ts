import fastifyMultipart from '@fastify/multipart';
import fastifySwagger from '@fastify/swagger';
import Fastify, { type FastifyInstance, type FastifySchema } from 'fastify';
import type { AppContext } from '../context.js';
import { VERSION } from '../version.js';
import { accessHook } from './access.js';
import { multipartPluginOptions, readMultipartBody } from './multipart-body.js';
import { refuseUnstorableText } from './unstorable-text.js';
import { registerJsonBodyParser } from './json-body.js';
import { refuseJsonUploadFields } from './json-upload-fields.js';
import { registerConsole } from './console.js';
import { errorHandler } from './error-handler.js';
import { agentRoutes } from './routes/agent.js';
import { agentStreamRoutes } from './routes/agent-stream.js';
import { authRoutes } from './routes/auth.js';
import { conversationRoutes } from './routes/conversations.js';
import { agentRunRoutes } from './routes/agent-runs.js';
import { userRoutes } from './routes/users.js';
import { healthRoutes } from './routes/health.js';
import { ragRoutes } from './routes/rag.js';
import { scenarioRoutes } from './routes/scenarios.js';
import { agentListRoutes } from './routes/agents.js';
import { traceRoutes } from './routes/traces.js';
import { trialQcRoutes } from './routes/trial-qc.js';
import { trialSkillRoutes } from './routes/trial-skills.js';
import { trialQueryRoutes } from './routes/trial-queries.js';
import { trialRuleYieldRoutes } from './routes/trial-rule-yield.js';
import { trialDataRoutes } from './routes/trial-data.js';
import { projectMemberRoutes } from './routes/project-members.js';
import { createProjectMembers } from '../core/auth/project-members.js';
import { trialProtocolRoutes } from './routes/trial-protocol.js';
import { trialSkillToolRoutes } from './routes/trial-skill-tools.js';
import { createTrialAssistant } from '../chat/index.js';
import { assistantRoutes } from './routes/assistant.js';
import { memoryRoutes } from './routes/memory.js';
import { toolRoutes } from './routes/tools.js';
import { protocolAgentRoutes } from './routes/protocol-agent.js';
import { agentConfigRoutes } from './routes/agent-configs.js';
import { consultRoutes } from './routes/consult.js';
import { mcpRoutes } from './routes/mcp.js';

/** Request log lines keep method and path; query values such as a sign-in code are masked. */
function serializeRequest(request: { method: string; url: string; id?: string }) {
  return { id: request.id, method: request.method, url: request.url.replace(/([?&][^=&]+=)[^&]*/g, '$1[redacted]') };
}

export interface RouteInfo {
  method: string;
  url: string;
  access: string;
  /** The schema the route was registered with (src/http/contract-agreement.test.ts compares it with the contract). */
  schema?: FastifySchema;
}

/**
 * Builds the HTTP server over a context: third-party plugins, then the access hook, then route plugins.
 * `routes` lists every route registered, so tests can walk the whole table.
 */
export async function buildServer(ctx: AppContext, options: { serveConsole?: boolean } = {}): Promise<FastifyInstance & { routeTable: RouteInfo[] }> {
  const app = Fastify({
    loggerInstance: ctx.logger.child({ area: 'http' }, { serializers: { req: serializeRequest } }),
    bodyLimit: 5 * 1024 * 1024,
    // The client's address (the sign-in rate limit counts by it) comes from X-Forwarded-For only behind named proxies.
    trustProxy: ctx.config.trustProxy,
    // allowUnionTypes: a Dify start-form value is one `type` list (string, number, boolean), never an anyOf that coercion would rewrite.
    ajv: { customOptions: { removeAdditional: false, coerceTypes: 'array', allErrors: true, allowUnionTypes: true } },
  }) as unknown as FastifyInstance;
  // JSON bodies deeper than MAX_NESTING_DEPTH are refused while parsing, before anything walks them.
  registerJsonBodyParser(app);
  const routeTable: RouteInfo[] = [];
  app.addHook('onRoute', (route) => {
    if (route.url.startsWith('/api/')) {
      for (const method of [route.method].flat()) if (method !== 'HEAD') routeTable.push({ method, url: route.url, access: route.config?.access ?? 'read', schema: route.schema });
    }
  });

  await app.register(fastifySwagger, {
    openapi: {
      info: { title: 'ClinAgent API', version: VERSION, description: 'AI agents for clinical research. Every route except GET /api/health needs Authorization: Bearer <token>.' },
      components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } } },
      security: [{ bearer: [] }],
    },
  });
  // Multipart bodies are read by our own hook (before the NUL check and validation): busboy enforces the
  // per-file size, field and file counts while streaming, and the hook the total; over a limit answers 413.
  await app.register(fastifyMultipart, multipartPluginOptions(ctx.config.uploads));
  app.addHook('preValidation', readMultipartBody(ctx.config.uploads));
  app.setErrorHandler(errorHandler);
  app.addHook('onRequest', accessHook(ctx.users));
  app.addHook('preValidation', refuseUnstorableText);
  app.addHook('preValidation', refuseJsonUploadFields);
  // No response is ever to be read as another type than it declares (an uploaded image as HTML, a JSON error as script).
  app.addHook('onSend', async (_request, reply) => {
    reply.header('x-content-type-options', 'nosniff');
  });

  await app.register(healthRoutes, { ctx });
  await app.register(authRoutes, { users: ctx.users, signIn: ctx.config.signIn });
  await app.register(userRoutes, { users: ctx.users });
  await app.register(scenarioRoutes, { ctx });
  await app.register(agentListRoutes, { agents: ctx.agents });
  await app.register(agentRoutes, { ctx });
  await app.register(agentStreamRoutes, { ctx });
  await app.register(conversationRoutes, { conversations: ctx.conversations });
  await app.register(agentRunRoutes, { agentRuns: ctx.agentRuns, conversations: ctx.conversations, scenarios: { agents: ctx.agents, scenarios: ctx.scenarios } });
  await app.register(ragRoutes, { ctx });
  await app.register(traceRoutes, { trace: ctx.trace, users: ctx.users });
  // Each trial route plugin gets the services it calls (built once in the context), never the whole context.
  const { trial } = ctx;
  await app.register(trialQcRoutes, { qc: trial.qc });
  await app.register(trialSkillRoutes, { skills: trial.skills });
  await app.register(trialQueryRoutes, { queries: trial.queries, reports: trial.reports });
  await app.register(trialRuleYieldRoutes, { reader: trial.reports });
  await app.register(trialDataRoutes, { records: trial.records, imports: trial.imports, redcap: trial.redcap });
  await app.register(projectMemberRoutes, { identifiers: trial.records, members: createProjectMembers(ctx.db) });
  await app.register(trialProtocolRoutes, { documents: trial.protocolDocuments });
  await app.register(trialSkillToolRoutes, { skillTools: trial.skillTools });
  await app.register(memoryRoutes, { memory: ctx.memory });
  await app.register(toolRoutes);
  await app.register(protocolAgentRoutes, { staged: ctx.stagedAgents, trace: ctx.trace });
  await app.register(agentConfigRoutes, { configs: ctx.agentConfigs, db: ctx.db });
  await app.register(consultRoutes, { consult: ctx.consult });
  // ClinAgent as an MCP server (docs/mcp.md): the trial services' reads and writes as tools acting for the token's user.
  await app.register(mcpRoutes, { version: VERSION, catalogue: { trial, staged: ctx.stagedAgents, tools: ctx.tools, users: ctx.users, trace: ctx.trace, logger: ctx.logger.child({ area: 'mcp' }) } });
  await app.register(assistantRoutes, { assistant: createTrialAssistant(ctx) });
  app.get('/api/openapi.json', { schema: { tags: ['system'], summary: 'This API as an OpenAPI 3 document', hide: true } }, async () => app.swagger());
  if (options.serveConsole !== false) await registerConsole(app);
  else app.setNotFoundHandler((request, reply) => void reply.status(404).send({ code: 'NOT_FOUND', message: `No route ${request.method} ${request.url.split('?')[0]}.`, details: {} }));

  return Object.assign(app, { routeTable });
}
