import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { ClinAgentError, errorMessage } from '../../core/errors.js';
import type { Logger } from '../../core/logger.js';
import type { ToolRegistry } from '../../core/tools/registry.js';
import type { McpToolSource } from '../../runtime/scenarios/mcp-block.js';
import { createMcpConnection, type McpConnection, type McpConnectionDeps } from './connection.js';
import { deferredMcpTool, listedMcpTool, mcpToolName, nameProblem, unusableReason } from './mcp-tool.js';
import { loadMcpServersFile, type McpServerConfig, type McpServersPolicy } from './servers-file.js';

/**
 * The MCP servers the administrator configured, connected once at start-up and reused by every call. A scenario
 * names a server and its tools (McpToolSource); `register` puts every tool a reachable server lists into the one
 * tool registry as `mcp__<server>__<tool>`, where it is validated, limited, traced and audited like any tool.
 */
export interface McpServers extends McpToolSource {
  register(tools: ToolRegistry): void;
  /** Closes every connection (stdio servers' processes end); calls after it fail. */
  close(): Promise<void>;
}

export interface OpenMcpServersOptions extends McpServersPolicy {
  /** MCP_SERVERS_FILE; absent: no server is configured. */
  serversFile?: string;
}

interface Server {
  config: McpServerConfig;
  connection: McpConnection;
  /** The tools it listed at start-up; absent when it could not be reached (`down` says why). */
  tools?: Tool[];
  down?: string;
}

/**
 * A server that cannot be reached at start-up does not stop ClinAgent: it is logged, a scenario may still name
 * its tools, and each call of one tries the server again and fails, naming the server and why, until it answers.
 * A file that is invalid (a bad URL, a secret variable without the MCP_SECRET_ prefix) does stop start-up.
 */
export async function openMcpServers(options: OpenMcpServersOptions, deps: Omit<McpConnectionDeps, 'allowedHosts'> & { logger: Pick<Logger, 'debug' | 'warn' | 'info'> }): Promise<McpServers> {
  const configs = options.serversFile ? loadMcpServersFile(options.serversFile, options) : [];
  const servers = new Map<string, Server>(configs.map((config) => [config.name, { config, connection: createMcpConnection(config, { ...deps, allowedHosts: options.allowedHosts ?? [] }) }]));
  await Promise.all([...servers.values()].map(async (server) => {
    try {
      server.tools = await server.connection.listTools();
      deps.logger.info({ mcpServer: server.config.name, tools: server.tools.map((t) => t.name) }, 'MCP server connected');
    } catch (error) {
      server.down = errorMessage(error);
      deps.logger.warn({ mcpServer: server.config.name, err: server.down }, `MCP server "${server.config.name}" could not be listed at start-up; ClinAgent starts anyway, and each call of its tools tries it again`);
    }
  }));
  let registry: ToolRegistry | undefined;
  const configured = () => [...servers.keys()].join(', ') || 'none';

  return {
    register(tools) {
      registry = tools;
      for (const server of servers.values()) {
        for (const tool of server.tools ?? []) {
          const reason = unusableReason(server.config.name, tool);
          if (reason) deps.logger.warn({ mcpServer: server.config.name, tool: tool.name }, reason);
          else tools.register(listedMcpTool(server.connection, tool, server.config.maxResultChars));
        }
      }
    },
    problem(serverName, toolName) {
      const server = servers.get(serverName);
      if (!server) return { field: 'server', message: `"${serverName}" is not a configured MCP server (configured: ${configured()}; the administrator lists them in the file MCP_SERVERS_FILE names)` };
      if (!server.tools) {
        const badName = nameProblem(serverName, toolName);
        return badName ? { field: 'tool', message: badName } : undefined;
      }
      const tool = server.tools.find((t) => t.name === toolName);
      if (!tool) return { field: 'tool', message: `"${toolName}" is not a tool of MCP server ${serverName} (it lists: ${server.tools.map((t) => t.name).join(', ') || 'none'})` };
      const reason = unusableReason(serverName, tool);
      return reason ? { field: 'tool', message: reason } : undefined;
    },
    admit(serverName, toolName) {
      const name = mcpToolName(serverName, toolName);
      const server = servers.get(serverName);
      if (!registry || !server) throw new ClinAgentError('INTERNAL', `MCP tool ${name} admitted before the MCP servers were registered, or of an unknown server.`);
      if (!registry.get(name)) registry.register(deferredMcpTool(server.connection, toolName, server.config.maxResultChars));
      return name;
    },
    async close() {
      await Promise.all([...servers.values()].map((server) => server.connection.close()));
    },
  };
}
