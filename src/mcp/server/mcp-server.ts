import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import type { UserToolCatalogue } from './catalogue.js';

const INSTRUCTIONS =
  'ClinAgent: quality control of investigator-initiated clinical trials. Every tool acts as the user whose token you sent: it sees only their trials (start with list_projects), identifier fields masked unless they may see them, and changes only what their role in a project allows.';

/**
 * One MCP server over one user's tool catalogue, for one request (the endpoint is stateless: each POST gets its own).
 * tools/list and tools/call are answered from the catalogue rather than McpServer.registerTool: the catalogue's
 * registry validates arguments, so a bad argument gets the same `path: message` lines an agent gets, inside the
 * call's trace, and the listed schema is the one the registry gives a model.
 */
export function createMcpServer(catalogue: UserToolCatalogue, info: { version: string }): McpServer {
  const server = new McpServer({ name: 'clinagent', version: info.version }, { capabilities: { tools: {} }, instructions: INSTRUCTIONS });
  server.server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: catalogue.list() }));
  server.server.setRequestHandler(CallToolRequestSchema, (request) => catalogue.call(request.params.name, request.params.arguments ?? {}));
  return server;
}
