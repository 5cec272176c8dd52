import type { ToolCallResult } from '../../../core/tools/registry.js';
import type { ReferenceChunk } from '../../../rag/index.js';
import type { AgentEventSink } from '../../loop/index.js';
import type { ClinAgentError } from '../../../core/errors.js';
import type { AgentFile } from '../../result.js';
import { readDifyErrorBody, type DifyErrorBody } from './dify-errors.js';

/** How a workflow run ended (`workflow_finished`): its status, outputs and error as Dify reports them. */
export interface WorkflowOutcome {
  status: string;
  outputs: Record<string, unknown>;
  error: string;
  totalTokens: number;
}

/** One node of a workflow or chatflow as it starts and finishes (`node_started`, `node_finished`). */
export interface DifyNode {
  /** This execution of the node (a node in a loop runs more than once); the node's own id when Dify gives none. */
  executionId: string;
  nodeId: string;
  nodeType: string;
  title: string;
  /** node_finished only: succeeded, failed, exception (failed, handled by the workflow) or stopped. */
  status?: string;
  error?: string;
  elapsedTime?: number;
  totalTokens?: number;
}

/** What a Dify stream told us so far: enough for the AgentResult, and for stopping the task. */
export interface DifyAnswer {
  answer: string;
  toolCalls: ToolCallResult[];
  references: ReferenceChunk[];
  usage: { promptTokens: number; completionTokens: number };
  /** Files the app's tools produced (`message_file`), their URLs absolute. */
  files: AgentFile[];
  taskId?: string;
  conversationId?: string;
  messageId?: string;
  workflowRunId?: string;
  /** `workflow_finished` arrived (workflows and chatflows). */
  workflow?: WorkflowOutcome;
  /** The last node that finished failed, for naming it when the workflow fails. */
  failedNode?: DifyNode;
  /** The terminal event arrived (`message_end`; `workflow_finished` for a workflow app): the answer is complete. */
  ended: boolean;
  /** An `error` event: the stream ends there, the answer so far is kept. */
  error?: DifyErrorBody;
  /** Our end of it: the run was stopped, or the stream went silent (the answer so far is kept too). */
  failure?: ClinAgentError;
}

export interface DifyAnswerReaderOptions {
  scenarioId: string;
  /** The app's API base URL: a file URL Dify gives as a path is resolved against it. */
  baseUrl: string;
  /** The event that completes a run: `message_end` (chat, agent, completion apps), `workflow_finished` (workflows). */
  endsWith: 'message_end' | 'workflow_finished';
  onEvent?: AgentEventSink;
  /** Each node as it starts and finishes (the engine makes them trace spans). */
  onNode?: (phase: 'started' | 'finished', node: DifyNode) => void;
}

interface Thought {
  tools: string[];
  toolInput: string;
  observation: string;
  /** Tool names whose start / finish was already sent as an event. */
  started: boolean;
  finished: boolean;
}

/** Dify's answers come in one "round": it has no rounds of ours, and the console groups text and tools by round. */
const ROUND = 1;

/**
 * Maps Dify's stream events (notes section 1) onto our AgentEvents and the pieces of an AgentResult:
 * - `message` / `agent_message` carry deltas; a closing `message` that repeats the whole answer after
 *   `agent_message` deltas (New Agent apps) is not appended again; a workflow's `text_chunk` is a delta too;
 * - `message_replace` replaces the text (moderation), and stream clients are told with `text_replaced`;
 * - `agent_thought` is re-sent with the same id as it fills in, so thoughts are upserted by id;
 * - `message_file` adds a file; `node_started` / `node_finished` go to `onNode`;
 * - `message_end` brings usage and `retriever_resources`, `workflow_finished` a workflow's outcome; `error` ends
 *   the stream with a code.
 */
export function createDifyAnswerReader(options: DifyAnswerReaderOptions) {
  const { scenarioId, onEvent } = options;
  const state: DifyAnswer = { answer: '', toolCalls: [], references: [], usage: { promptTokens: 0, completionTokens: 0 }, files: [], ended: false };
  const thoughts = new Map<string, Thought>();
  let sawAgentDeltas = false;

  const appendText = (text: string) => {
    if (!text) return;
    state.answer += text;
    onEvent?.({ type: 'text_delta', round: ROUND, text });
  };

  function onMessage(text: string): void {
    if (sawAgentDeltas && state.answer && text.startsWith(state.answer)) {
      // The whole answer again: only what it adds (normally nothing) is new.
      appendText(text.slice(state.answer.length));
      return;
    }
    appendText(text);
  }

  function onThought(event: Record<string, unknown>): void {
    const id = String(event.id ?? event.position ?? thoughts.size);
    const thought = thoughts.get(id) ?? { tools: [], toolInput: '', observation: '', started: false, finished: false };
    thoughts.set(id, thought);
    if (typeof event.tool === 'string' && event.tool) thought.tools = event.tool.split(';').map((name) => name.trim()).filter(Boolean);
    if (typeof event.tool_input === 'string' && event.tool_input) thought.toolInput = event.tool_input;
    if (typeof event.observation === 'string' && event.observation) thought.observation = event.observation;
    if (thought.tools.length && !thought.started) {
      thought.started = true;
      const inputs = keyedByTool(thought.toolInput);
      for (const [i, name] of thought.tools.entries()) onEvent?.({ type: 'tool_call_started', round: ROUND, callId: `${id}:${i}`, name, arguments: JSON.stringify(inputs?.[name] ?? {}) });
    }
    if (thought.started && thought.observation && !thought.finished) {
      thought.finished = true;
      for (const [i, name] of thought.tools.entries()) onEvent?.({ type: 'tool_call_finished', round: ROUND, callId: `${id}:${i}`, name, success: true });
    }
  }

  function onEnd(event: Record<string, unknown>): void {
    if (options.endsWith === 'message_end') state.ended = true;
    const metadata = (event.metadata ?? {}) as { usage?: Record<string, unknown>; retriever_resources?: unknown };
    const usage = metadata.usage ?? {};
    state.usage = { promptTokens: Number(usage.prompt_tokens) || 0, completionTokens: Number(usage.completion_tokens) || 0 };
    if (Array.isArray(metadata.retriever_resources)) state.references = metadata.retriever_resources.map((r) => toReference(scenarioId, r as Record<string, unknown>));
  }

  function onWorkflowFinished(data: Record<string, unknown>): void {
    const outputs = record(data.outputs);
    state.workflow = { status: String(data.status ?? ''), outputs, error: typeof data.error === 'string' ? data.error : '', totalTokens: Number(data.total_tokens) || 0 };
    if (typeof data.id === 'string' && !state.workflowRunId) state.workflowRunId = data.id;
    if (options.endsWith !== 'workflow_finished') return;
    state.ended = true;
    // Dify reports a workflow's total only: counted as prompt tokens, so the trace's totals are right.
    state.usage = { promptTokens: state.workflow.totalTokens, completionTokens: 0 };
  }

  return {
    state,
    /** One parsed `data:` object of the stream. */
    read(event: Record<string, unknown>): void {
      if (typeof event.task_id === 'string') state.taskId = event.task_id;
      if (typeof event.conversation_id === 'string' && event.conversation_id) state.conversationId = event.conversation_id;
      if (typeof event.message_id === 'string') state.messageId = event.message_id;
      switch (event.event) {
        case 'agent_message':
          sawAgentDeltas = true;
          appendText(String(event.answer ?? ''));
          break;
        case 'message':
          onMessage(String(event.answer ?? ''));
          break;
        case 'text_chunk':
          appendText(String(record(event.data).text ?? ''));
          break;
        case 'message_replace': {
          state.answer = String(event.answer ?? '');
          const reason = typeof event.reason === 'string' && event.reason ? { reason: event.reason } : {};
          onEvent?.({ type: 'text_replaced', text: state.answer, ...reason });
          break;
        }
        case 'message_file':
          state.files.push(toFile(event, options.baseUrl));
          break;
        case 'workflow_started':
          if (typeof event.workflow_run_id === 'string') state.workflowRunId = event.workflow_run_id;
          break;
        case 'node_started':
          options.onNode?.('started', toNode(record(event.data)));
          break;
        case 'node_finished': {
          const node = toNode(record(event.data));
          if (node.status === 'failed') state.failedNode = node;
          options.onNode?.('finished', node);
          break;
        }
        case 'workflow_finished':
          onWorkflowFinished(record(event.data));
          break;
        case 'agent_thought':
          onThought(event);
          break;
        case 'message_end':
          onEnd(event);
          break;
        case 'error':
          state.error = readDifyErrorBody(Number(event.status) || 500, JSON.stringify(event));
          break;
        default:
          // iteration_*, loop_*, tts_*, agent_log: nothing the AgentResult carries.
          break;
      }
    },
    /** The tool calls as the AgentResult lists them, in the order the thoughts came. */
    toolCalls(): ToolCallResult[] {
      return [...thoughts.values()].flatMap((thought) => {
        const inputs = keyedByTool(thought.toolInput);
        const observations = keyedByTool(thought.observation);
        return thought.tools.map((name) => ({
          toolName: name,
          success: true,
          arguments: inputs?.[name] ?? {},
          result: observations?.[name] ?? thought.observation,
          error: '',
        }));
      });
    },
  };
}

/** `tool_input` (and a multi-tool `observation`) is a JSON string keyed by tool name; anything else is not. */
function keyedByTool(text: string): Record<string, unknown> | undefined {
  if (!text) return undefined;
  try {
    const parsed: unknown = JSON.parse(text);
    return parsed && typeof parsed === 'object' && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** A Dify citation as our reference: its segment is the chunk, its document the source file. */
function toReference(scenarioId: string, resource: Record<string, unknown>): ReferenceChunk {
  const text = (value: unknown) => (typeof value === 'string' ? value : '');
  const documentId = text(resource.document_id);
  const segmentPosition = Number(resource.segment_position);
  return {
    documentId,
    scenarioId,
    collection: text(resource.dataset_name) || text(resource.dataset_id),
    sourceFile: text(resource.document_name),
    chunkId: text(resource.segment_id),
    chunkIndex: Number.isInteger(segmentPosition) ? segmentPosition : Number(resource.position) || 0,
    content: text(resource.content),
    score: Number(resource.score) || 0,
  };
}

function record(value: unknown): Record<string, unknown> {
  return value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

/** A `message_file` event as a file of the result; a URL Dify gives as a path is on the app's host, anything but http(s) is dropped. */
function toFile(event: Record<string, unknown>, baseUrl: string): AgentFile {
  const text = (value: unknown) => (typeof value === 'string' ? value : '');
  let url = '';
  try {
    const resolved = new URL(text(event.url), baseUrl);
    // Clients show it as a link: a javascript: or data: URL from an app is not one.
    if (resolved.protocol === 'https:' || resolved.protocol === 'http:') url = resolved.href;
  } catch {
    // not a URL: the file is listed without one
  }
  return { id: text(event.id), type: text(event.type), url, belongsTo: text(event.belongs_to) };
}

function toNode(data: Record<string, unknown>): DifyNode {
  const text = (value: unknown) => (typeof value === 'string' ? value : '');
  const nodeId = text(data.node_id);
  const metadata = record(data.execution_metadata);
  return {
    executionId: text(data.id) || nodeId,
    nodeId,
    nodeType: text(data.node_type),
    title: text(data.title),
    ...(typeof data.status === 'string' ? { status: data.status } : {}),
    ...(typeof data.error === 'string' && data.error ? { error: data.error } : {}),
    ...(typeof data.elapsed_time === 'number' ? { elapsedTime: data.elapsed_time } : {}),
    ...(metadata.total_tokens !== undefined ? { totalTokens: Number(metadata.total_tokens) || 0 } : {}),
  };
}
