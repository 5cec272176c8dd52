import { z } from 'zod';

/**
 * A scenario's `mcp:` key: which MCP servers it takes tools from, and which of their tools it may use. The servers
 * are the administrator's (MCP_SERVERS_FILE, src/mcp/client); a scenario only names them, so a scenario author can
 * never point the server at a URL or a command of their own.
 */
export const MCP_SERVER_NAME = /^[a-z][a-z0-9-]{0,29}$/;

export const mcpBlock = z
  .array(
    z
      .object({
        server: z.string().regex(MCP_SERVER_NAME, 'must be the name of an MCP server the administrator configured (1-30 lowercase letters, digits or -), e.g. labdata'),
        tools: z.array(z.string().min(1).max(128)).min(1, 'must name at least one tool of the server, e.g. [lookup_visit]'),
      })
      .strict(),
  )
  .min(1, 'must name at least one server, e.g. [{server: labdata, tools: [lookup_visit]}], or be left out');

/**
 * The configured MCP servers as scenario files see them (implemented by src/mcp/client). `problem` is checked with
 * the file's other fields; `admit` runs for a valid file and gives the registry name the tool runs under.
 */
export interface McpToolSource {
  /** Why the scenario may not use `tool` of `server`: the server is not configured, or does not list the tool. */
  problem(server: string, tool: string): { field: 'server' | 'tool'; message: string } | undefined;
  /** The tool's name in the tool registry (`mcp__<server>__<tool>`), once it is there. */
  admit(server: string, tool: string): string;
}

/** Every `mcp` entry's problems as zod issues under `mcp.<i>.server` or `mcp.<i>.tools.<j>`. */
export function mcpBlockProblems(block: unknown, source: McpToolSource | undefined, ctx: z.RefinementCtx): void {
  if (!Array.isArray(block)) return;
  block.forEach((entry: unknown, i) => {
    if (typeof entry !== 'object' || entry === null) return;
    const { server, tools } = entry as { server?: unknown; tools?: unknown };
    if (typeof server !== 'string' || !MCP_SERVER_NAME.test(server)) return;
    if (!source) {
      ctx.addIssue({ code: 'custom', path: ['mcp', i, 'server'], message: `"${server}" is not a configured MCP server: this server configures none (the administrator lists them in the file MCP_SERVERS_FILE names)` });
      return;
    }
    if (!Array.isArray(tools)) return;
    let serverReported = false;
    tools.forEach((tool: unknown, j) => {
      if (typeof tool !== 'string' || !tool || serverReported) return;
      const problem = source.problem(server, tool);
      if (!problem) return;
      serverReported = problem.field === 'server';
      ctx.addIssue({ code: 'custom', path: problem.field === 'server' ? ['mcp', i, 'server'] : ['mcp', i, 'tools', j], message: problem.message });
    });
  });
}
