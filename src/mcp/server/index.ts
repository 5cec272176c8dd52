export { userToolCatalogue, type McpCatalogueDeps, type UserToolCatalogue } from './catalogue.js';
export { createMcpServer } from './mcp-server.js';
export type { McpTool } from './mcp-tool.js';
