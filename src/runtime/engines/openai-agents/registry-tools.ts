import type { FunctionTool } from '@openai/agents';
import type { ToolCallResult, ToolRegistry } from '../../../core/tools/registry.js';
import type { TraceScope } from '../../../core/trace/store.js';
import type { AgentEventSink } from '../../loop/index.js';
import { toolResultContent } from '../../messages.js';

interface RegistryToolsOptions {
  registry: ToolRegistry;
  trace: TraceScope;
  onEvent?: AgentEventSink;
  /** Every call, in the order they finished: the run's AgentResult.toolCalls. */
  calls: ToolCallResult[];
}

/**
 * The scenario's tools as SDK function tools whose calls go through our one registry: the SDK hands over the
 * arguments as the model wrote them (a JSON string, not parsed or checked by the SDK), and `registry.run` checks them
 * against the tool's schema, runs it and records the tool span, exactly as for the built-in loop. A refused or
 * failed call goes back to the model as its error, in the same data block the built-in loop sends.
 */
export function registryTools(names: readonly string[], options: RegistryToolsOptions): FunctionTool[] {
  return options.registry.specs(names).map((spec) => ({
    type: 'function',
    name: spec.name,
    description: spec.description,
    parameters: spec.parameters as FunctionTool['parameters'],
    // Our schemas are not written for strict mode (optional fields, defaults); the registry checks the arguments.
    strict: false,
    needsApproval: async () => false,
    isEnabled: async () => true,
    async invoke(runContext, input, details) {
      // Model calls so far: the round this call was asked for, counted from 1 as in the built-in loop.
      const round = runContext.usage.requests;
      const callId = details?.toolCall?.callId ?? `${spec.name}-${options.calls.length + 1}`;
      options.onEvent?.({ type: 'tool_call_started', round, callId, name: spec.name, arguments: input });
      const result = await options.registry.run(spec.name, input, options.trace);
      options.calls.push(result);
      options.onEvent?.({ type: 'tool_call_finished', round, callId, name: spec.name, success: result.success, ...(result.success ? {} : { error: result.error }) });
      return toolResultContent(result);
    },
  }));
}
