import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import type { ToolDefinition } from '../../core/tools/registry.js';
import { argumentProblems, argumentsSchema, compileArguments, modelParameters } from './arguments.js';
import type { McpConnection } from './connection.js';

/** `mcp__<server>__<tool>`: the registry's and OpenAI's name rule (letters, digits, _ and -, at most 64). */
export function mcpToolName(server: string, tool: string): string {
  return `mcp__${server}__${tool}`;
}

/** Why `mcp__<server>__<tool>` is not a name the registry and OpenAI take (MCP allows dots and 128 characters). */
export function nameProblem(server: string, tool: string): string | undefined {
  const name = mcpToolName(server, tool);
  if (/^[a-zA-Z][a-zA-Z0-9_-]{0,63}$/.test(name)) return undefined;
  return `"${tool}" of MCP server ${server} cannot be offered to a model: its name ${name} must be at most 64 letters, digits, _ or - (rename the tool or the server)`;
}

/** Why a listed tool cannot join the registry (a name the registry refuses, a schema Ajv cannot compile), or undefined. */
export function unusableReason(server: string, tool: Tool): string | undefined {
  const badName = nameProblem(server, tool.name);
  if (badName) return badName;
  try {
    compileArguments(tool.inputSchema as Record<string, unknown>);
    return undefined;
  } catch (error) {
    return `"${tool.name}" of MCP server ${server} has an input schema that cannot be checked: ${(error as Error).message}`;
  }
}

/** A tool the server listed at start-up: the model sees its schema, and the registry checks arguments against it. */
export function listedMcpTool(connection: McpConnection, tool: Tool, maxResultChars: number): ToolDefinition<Record<string, unknown>> {
  const validate = compileArguments(tool.inputSchema as Record<string, unknown>);
  return {
    name: mcpToolName(connection.server, tool.name),
    description: describe(connection.server, tool),
    parameters: modelParameters(tool.inputSchema as Record<string, unknown>),
    schema: argumentsSchema(validate),
    run: async (args) => toolResult(connection.server, tool.name, await connection.callTool(tool.name, args), maxResultChars),
  };
}

/**
 * A tool of a server that could not be reached at start-up, which a scenario names: registered so the scenario is
 * served, and the server learnt at the first call. Until the server answers, each call fails saying why; once it
 * does, a tool it does not list, or arguments its schema refuses, fail before the tool is called.
 */
export function deferredMcpTool(connection: McpConnection, toolName: string, maxResultChars: number): ToolDefinition<Record<string, unknown>> {
  let listed: { tool: Tool; validate: ReturnType<typeof compileArguments> } | undefined;
  return {
    name: mcpToolName(connection.server, toolName),
    description: `Tool ${toolName} of MCP server ${connection.server} (the server was not reachable when ClinAgent started, so its description is not known).`,
    parameters: { type: 'object', additionalProperties: true },
    schema: z.record(z.string(), z.unknown()),
    async run(args) {
      if (!listed) {
        const tools = await connection.listTools();
        const tool = tools.find((t) => t.name === toolName);
        if (!tool) throw new Error(`MCP server "${connection.server}" does not list a tool "${toolName}" (it lists: ${tools.map((t) => t.name).join(', ') || 'none'}). Fix the scenario's mcp tools.`);
        const reason = unusableReason(connection.server, tool);
        if (reason) throw new Error(reason);
        listed = { tool, validate: compileArguments(tool.inputSchema as Record<string, unknown>) };
      }
      const problems = argumentProblems(listed.validate, args);
      if (problems.length) throw new Error(`Invalid arguments (the server was not called):\n${problems.join('\n')}`);
      return toolResult(connection.server, toolName, await connection.callTool(toolName, args), maxResultChars);
    },
  };
}

function describe(server: string, tool: Tool): string {
  const own = (tool.description ?? tool.title ?? tool.annotations?.title ?? '').trim();
  return `${own || `Tool ${tool.name}`} (from MCP server ${server})`;
}

/**
 * What the model gets back: the structured content when the server gives it (the SDK has checked it against the
 * tool's output schema), else the text parts; other parts (images, resources) are named, not inlined. An answer
 * the server marks as an error fails the call with its text. Longer than the server's max_result_chars, it is cut
 * and says so, so one tool cannot fill the model's context.
 */
export function toolResult(server: string, tool: string, result: CallToolResult, maxResultChars: number): unknown {
  const text = (result.content ?? []).map((part) => {
    if (part.type === 'text') return part.text;
    if (part.type === 'resource_link') return `[resource: ${part.uri}]`;
    if (part.type === 'resource') return 'text' in part.resource ? String(part.resource.text) : `[resource: ${part.resource.uri}]`;
    return `[${part.type} content${'mimeType' in part ? ` (${String(part.mimeType)})` : ''}, not shown]`;
  }).join('\n');
  if (result.isError) throw new Error(`MCP server "${server}" answered that ${tool} failed: ${cut(text || '(no message)', maxResultChars)}`);
  if (result.structuredContent !== undefined) {
    const json = JSON.stringify(result.structuredContent);
    if (json.length <= maxResultChars) return result.structuredContent;
    return cut(text || json, maxResultChars);
  }
  return cut(text, maxResultChars);
}

function cut(text: string, max: number): string {
  if (text.length <= max) return text;
  return `${text.slice(0, max)}\n[cut: the tool answered ${text.length} characters; only the first ${max} are shown (max_result_chars of this MCP server)]`;
}
