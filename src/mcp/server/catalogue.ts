import type { MembershipCheck } from '../../core/auth/membership.js';
import { WRITER_ROLES, type User } from '../../core/auth/users.js';
import { ClinAgentError } from '../../core/errors.js';
import type { Logger } from '../../core/logger.js';
import { createToolRegistry, tracedArguments, type ToolCallResult, type ToolRegistry } from '../../core/tools/registry.js';
import type { TraceStore } from '../../core/trace/store.js';
import type { StagedAgentService } from '../../runtime/staged/staged-agent-service.js';
import type { McpTool } from './mcp-tool.js';
import { protocolTools } from './protocol-tools.js';
import { redcapLogicTool } from './redcap-logic-tool.js';
import { trialTools, type TrialToolServices } from './trial-tools.js';

/** Tools of the platform registry the endpoint offers as they are: pure computations that read no one's data. */
const SHARED_TOOLS = ['calculate_sample_size'] as const;
/** Tool names are at most 64 characters (the registry's rule); a longer one is no tool, and is shown cut. */
const MAX_UNKNOWN_NAME = 80;

export interface McpCatalogueDeps {
  trial: TrialToolServices;
  staged: Pick<StagedAgentService, 'list' | 'get'>;
  /** The platform's tool registry, where the shared tools are registered. */
  tools: Pick<ToolRegistry, 'get'>;
  users: Pick<MembershipCheck, 'isMember' | 'writesInSomeProject'>;
  trace: Pick<TraceStore, 'start'>;
  logger: Logger;
}

/** A tool as tools/list shows it: the registry's JSON Schema of its arguments, and whether it changes anything. */
export interface ListedTool {
  name: string;
  description: string;
  inputSchema: { type: 'object'; [key: string]: unknown };
  annotations: { readOnlyHint: boolean; destructiveHint: boolean; openWorldHint: boolean };
}

/** A call's outcome as tools/call answers it: the result as JSON text, or the error's message as a tool error. */
export interface McpCallResult {
  [key: string]: unknown;
  content: Array<{ type: 'text'; text: string }>;
  isError?: boolean;
}

export interface UserToolCatalogue {
  list(): ListedTool[];
  call(name: string, args: unknown): Promise<McpCallResult>;
}

/**
 * The tools one user is offered over MCP, bound to them, in a registry of their own: what they do not list they
 * cannot call (the registry answers "Unknown tool", naming what exists). Writes are offered to a user with a writer
 * role on the platform or in some trial, as the REST access hook lets them through; the service then checks the
 * role in the project named, as for the route.
 */
export async function userToolCatalogue(deps: McpCatalogueDeps, actor: User): Promise<UserToolCatalogue> {
  const writer = WRITER_ROLES.has(actor.role) || (await deps.users.writesInSomeProject(actor));
  const shared = SHARED_TOOLS.map((name) => {
    const tool = deps.tools.get(name);
    if (!tool) throw new ClinAgentError('INTERNAL', `The platform tool "${name}" is not registered; the MCP endpoint offers it to everyone.`, { tool: name });
    return tool as McpTool;
  });
  const offered = [...trialTools(deps.trial, actor), ...protocolTools(deps.staged, actor), redcapLogicTool(), ...shared].filter((tool) => writer || !tool.writes);
  const byName = new Map(offered.map((tool) => [tool.name, tool]));
  const registry = createToolRegistry();
  for (const tool of offered) registry.register({ ...tool, run: (args: unknown) => withoutInternals(deps.logger, tool, args) });
  return {
    // Only tools/list needs the schemas (a tools/call request never does); the registry has each converted once.
    list: () =>
      registry.specs([...byName.keys()]).map((spec) => ({
        name: spec.name,
        description: spec.description,
        inputSchema: spec.parameters as ListedTool['inputSchema'],
        annotations: { readOnlyHint: !byName.get(spec.name)?.writes, destructiveHint: false, openWorldHint: false },
      })),
    async call(name, args) {
      const tool = byName.get(name);
      // The name of a tool not offered is the client's text: kept short in the trace and the answer.
      const shownName = tool ? name : name.slice(0, MAX_UNKNOWN_NAME);
      // A tool this user is not offered (a viewer naming answer_query) has no hook to say what its arguments may hold.
      const traced = tool ? tracedArguments(tool, args) : NOT_OFFERED;
      // The trace belongs to the project only when the caller is its member: an outsider's probe is theirs alone.
      const projectId = typeof (args as { projectId?: unknown })?.projectId === 'string' ? (args as { projectId: string }).projectId : undefined;
      const member = projectId !== undefined && (await deps.users.isMember(projectId, actor));
      const run = await deps.trace.start({ kind: 'mcp', name: shownName, userId: actor.id, projectId: member ? projectId : undefined, input: { tool: shownName, arguments: traced } });
      const result: ToolCallResult = await run.span('tool', shownName, { arguments: traced }, () => registry.run(shownName, args), (outcome) => ({
        output: outcome.success ? tracedResult(tool, outcome.result) : null,
        status: outcome.success ? 'success' : 'failed',
        error: outcome.error || undefined,
      }));
      await run.finish(result.success ? { status: 'success' } : { status: 'failed', error: result.error });
      if (!result.success) return { content: [{ type: 'text', text: result.error }], isError: true };
      return { content: [{ type: 'text', text: JSON.stringify(result.result) }] };
    },
  };
}

/**
 * Runs the tool; an error that is not one of ours (a driver's, a bug's) may carry SQL or a server path, so the
 * caller gets a generic message and the log the error, as the HTTP error handler does for a 500.
 */
async function withoutInternals(logger: Logger, tool: McpTool, args: unknown): Promise<unknown> {
  try {
    return await tool.run(args);
  } catch (error) {
    if (ClinAgentError.isInstance(error)) throw error;
    logger.error({ err: error, tool: tool.name }, 'MCP tool failed');
    throw new ClinAgentError('INTERNAL', 'Internal error; the server log has the details. Try again, or report it with the time of the call.');
  }
}

/** In the trace in place of the arguments of a call to a tool the user is not offered. */
export const NOT_OFFERED = '[arguments withheld: no such tool is offered to this user]';

/** In the span in place of a result whose `traceResult` threw: the result may hold what it was to remove. */
export const RESULT_WITHHELD = "[result withheld: this tool's traceResult failed]";

function tracedResult(tool: McpTool | undefined, result: unknown): unknown {
  if (!tool?.traceResult) return result;
  try {
    return tool.traceResult(result);
  } catch {
    return RESULT_WITHHELD;
  }
}
