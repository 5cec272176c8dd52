import type { ToolDefinition } from '../../core/tools/registry.js';

/**
 * A tool the MCP endpoint offers: a registry tool, plus what only the endpoint needs to know about it. Tools bound
 * to the acting user are built per request, so `run` closes over that user and every service call checks them.
 */
export interface McpTool<Args = any> extends ToolDefinition<Args> {
  /** Changes project data: offered only to a user with a writer role somewhere (a viewer never sees it listed). */
  writes?: boolean;
  /**
   * What the call's trace span keeps of the result, for a tool whose result may carry record values: the caller
   * may be allowed identifiers (a PI), the trace never is. Absent, the span keeps the result whole.
   */
  traceResult?(result: any): unknown;
}

/** A text argument's length, in the trace in place of the text (an answer to a site may quote a patient). */
export const withheldText = (text: unknown): string => `[withheld: ${typeof text === 'string' ? text.length : 0} characters]`;
