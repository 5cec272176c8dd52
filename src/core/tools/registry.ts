import { z } from 'zod';
import { ClinAgentError, errorMessage, formatIssues } from '../errors.js';
import type { ToolSpec } from '../llm/types.js';
import type { TraceScope } from '../trace/store.js';

/**
 * A tool a model may call. Tools get their inputs as validated arguments and whatever their factory closed
 * over (records, a read-only store); they never see configuration, so they can never read an API key.
 */
export interface ToolDefinition<Args = unknown> {
  name: string;
  description: string;
  schema: z.ZodType<Args>;
  /**
   * The JSON Schema the model sees, for a tool whose arguments are declared in JSON Schema rather than zod (an MCP
   * server's tool): then `schema` checks arguments against it, and the model sees it as its author wrote it.
   * Absent, the model sees `schema` converted.
   */
  parameters?: Record<string, unknown>;
  run(args: Args): Promise<unknown> | unknown;
  /**
   * What of a call's arguments its trace span may keep, for a tool whose arguments may carry what a trace must not
   * (a patient's name or phone number in a record to save). Given the arguments as the model sent them (a JSON
   * string or a value, not yet validated), returns what the span records in their place. Absent, the span keeps
   * them as sent. A hook that throws leaves a placeholder in the span, never the arguments.
   */
  traceArguments?(args: unknown): unknown;
}

/** In the trace in place of arguments whose `traceArguments` threw: the arguments may hold what it was to remove. */
export const ARGUMENTS_WITHHELD = '[arguments withheld: this tool\'s traceArguments failed]';

export function tracedArguments(tool: ToolDefinition | undefined, args: unknown): unknown {
  if (!tool?.traceArguments) return args;
  try {
    return tool.traceArguments(args);
  } catch {
    return ARGUMENTS_WITHHELD;
  }
}

/** The one result shape for every tool call, success or not. */
export interface ToolCallResult {
  toolName: string;
  success: boolean;
  arguments: unknown;
  result: unknown;
  error: string;
}

export interface ToolRegistry {
  register<Args>(tool: ToolDefinition<Args>): void;
  get(name: string): ToolDefinition | undefined;
  list(): ToolDefinition[];
  /** JSON Schema specs for the model; unknown names are an error naming what exists. */
  specs(names: readonly string[]): ToolSpec[];
  /**
   * A registry with every tool of this one plus `tools`: tools bound to one request (a project's records, the
   * acting user) live only there, while the model still sees, and is refused, every other registered tool.
   */
  extend(tools: readonly ToolDefinition<any>[]): ToolRegistry;
  /** Never throws: unknown tools, bad arguments and throwing tools all come back as failed results. */
  run(name: string, args: unknown, trace?: TraceScope): Promise<ToolCallResult>;
}

const TOOL_NAME = /^[a-zA-Z][a-zA-Z0-9_-]{0,63}$/;

// Converting a zod schema takes about a millisecond and every run asks before its first model call: once per schema,
// so tools built per request or per user (the MCP endpoint's, a project's) over the same schema convert it once.
const parametersBySchema = new WeakMap<z.ZodType, Record<string, unknown>>();

function parametersOf(tool: ToolDefinition): Record<string, unknown> {
  if (tool.parameters) return tool.parameters;
  let parameters = parametersBySchema.get(tool.schema);
  if (!parameters) {
    // The model writes the input side of the schema: a field with a default is optional to it. The output
    // side (zod's default) would list `limit: z.number().default(50)` as required.
    parameters = z.toJSONSchema(tool.schema, { target: 'draft-7', io: 'input' }) as Record<string, unknown>;
    delete parameters.$schema;
    parametersBySchema.set(tool.schema, parameters);
  }
  return parameters;
}

export function createToolRegistry(): ToolRegistry {
  const tools = new Map<string, ToolDefinition>();

  async function execute(name: string, rawArgs: unknown): Promise<ToolCallResult> {
    const tool = tools.get(name);
    let args: unknown = rawArgs;
    if (!tool) {
      return { toolName: name, success: false, arguments: args, result: null, error: `Unknown tool "${name}". Available tools: ${[...tools.keys()].join(', ') || '(none)'}.` };
    }
    if (typeof rawArgs === 'string') {
      try {
        args = rawArgs.trim() === '' ? {} : JSON.parse(rawArgs);
      } catch (error) {
        return { toolName: name, success: false, arguments: rawArgs, result: null, error: `Arguments are not valid JSON (${errorMessage(error)}). Send one JSON object matching the tool's parameters.` };
      }
    }
    const parsed = tool.schema.safeParse(args ?? {});
    if (!parsed.success) {
      // One `path: message` line per issue: without the path a model cannot fix its own call.
      return { toolName: name, success: false, arguments: args, result: null, error: `Invalid arguments for ${name}:\n${formatIssues(parsed.error.issues).join('\n')}` };
    }
    try {
      const result = await tool.run(parsed.data);
      return { toolName: name, success: true, arguments: parsed.data, result: result ?? null, error: '' };
    } catch (error) {
      return { toolName: name, success: false, arguments: parsed.data, result: null, error: `${name} failed: ${errorMessage(error)}` };
    }
  }

  return {
    register(tool) {
      if (!TOOL_NAME.test(tool.name)) {
        throw new ClinAgentError('VALIDATION_FAILED', `Tool name "${tool.name}" is invalid: use letters, digits, _ or -, starting with a letter (at most 64).`, { field: 'name' });
      }
      if (tools.has(tool.name)) {
        throw new ClinAgentError('CONFLICT_STATE', `A tool named "${tool.name}" is already registered. Pick another name or register it once.`, { tool: tool.name });
      }
      tools.set(tool.name, tool as ToolDefinition);
    },
    get: (name) => tools.get(name),
    extend(extra) {
      const child = createToolRegistry();
      for (const tool of [...tools.values(), ...extra]) child.register(tool);
      return child;
    },
    list: () => [...tools.values()],
    specs(names) {
      return names.map((name) => {
        const tool = tools.get(name);
        if (!tool) {
          throw new ClinAgentError('NOT_FOUND', `Unknown tool "${name}". Available tools: ${[...tools.keys()].join(', ') || '(none)'}.`, { tool: name });
        }
        return { name: tool.name, description: tool.description, parameters: parametersOf(tool) };
      });
    },
    async run(name, args, trace) {
      if (!trace) return execute(name, args);
      return trace.span('tool', name, { arguments: tracedArguments(tools.get(name), args) }, () => execute(name, args), (result) => ({
        output: result.success ? result.result : null,
        status: result.success ? 'success' : 'failed',
        error: result.error || undefined,
      }));
    },
  };
}
