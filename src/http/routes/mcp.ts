import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { FastifyPluginAsync } from 'fastify';
import { ClinAgentError } from '../../core/errors.js';
import { createMcpServer, userToolCatalogue, type McpCatalogueDeps } from '../../mcp/server/index.js';
import { requireUser } from '../access.js';

const DESCRIPTION =
  'The Model Context Protocol endpoint (Streamable HTTP, stateless: one JSON-RPC request per POST, answered as JSON). Send Authorization: Bearer <token> as for the API: every tool acts as that user, with their projects, roles and identifier masking; docs/mcp.md says how to connect an MCP client.';

/** The JSON-RPC error a stateless MCP server answers to what needs a session (a GET event stream, a DELETE). */
const NO_SESSION = { jsonrpc: '2.0', error: { code: -32000, message: 'Method not allowed: this MCP endpoint is stateless; send each JSON-RPC request as a POST.' }, id: null };

/**
 * ClinAgent as an MCP server. The access hook has authenticated the token (the API's own check: revoked, expired and
 * deactivated are refused the same way) before the handler runs; the handler hands the raw request to the SDK's
 * transport, over a server whose tools are bound to the token's user.
 */
export const mcpRoutes: FastifyPluginAsync<{ catalogue: McpCatalogueDeps; version: string }> = async (app, { catalogue, version }) => {
  // RFC 6750: a 401 says which scheme to use, and `invalid_token` when one was sent and refused. MCP clients read it.
  app.addHook('onError', async (request, reply, error) => {
    if (!ClinAgentError.isInstance(error) || error.code !== 'UNAUTHENTICATED') return;
    void reply.header('www-authenticate', request.headers.authorization ? 'Bearer realm="ClinAgent", error="invalid_token"' : 'Bearer realm="ClinAgent"');
  });

  app.post('/mcp', { config: { access: 'read' }, schema: { tags: ['mcp'], summary: 'MCP endpoint (Streamable HTTP): tools/list and tools/call as the token\'s user', description: DESCRIPTION } }, async (request, reply) => {
    const server = createMcpServer(await userToolCatalogue(catalogue, requireUser(request)), { version });
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    reply.hijack();
    reply.raw.on('close', () => {
      void transport.close();
      void server.close();
    });
    try {
      await server.connect(transport);
      await transport.handleRequest(request.raw, reply.raw, request.body);
    } catch (error) {
      // Hijacked: the error handler can no longer answer, so the request gets a JSON-RPC error and the log the cause.
      request.log.error({ err: error }, 'MCP request failed');
      if (!reply.raw.headersSent) reply.raw.writeHead(500, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32603, message: `Internal error. The server log has the details under request id ${request.id}.` }, id: null }));
    }
  });

  for (const method of ['GET', 'DELETE'] as const) {
    app.route({
      method,
      url: '/mcp',
      config: { access: 'read' },
      schema: { tags: ['mcp'], summary: `Not used by this stateless MCP endpoint: 405 (send requests as POST)`, description: DESCRIPTION },
      handler: async (_request, reply) => reply.status(405).header('allow', 'POST').send(NO_SESSION),
    });
  }
};
