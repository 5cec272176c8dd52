export { openMcpServers, type McpServers, type OpenMcpServersOptions } from './mcp-servers.js';
export { loadMcpServersFile, MCP_SECRET_PREFIX, type McpServerConfig } from './servers-file.js';
export { mcpToolName } from './mcp-tool.js';
