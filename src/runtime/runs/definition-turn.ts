import type { LlmGateway } from '../../core/llm/gateway.js';
import type { ToolRegistry } from '../../core/tools/registry.js';
import type { TraceScope } from '../../core/trace/store.js';
import type { AgentDefinition } from '../definitions/agent-definition.js';
import { waitingPrompt } from '../loop/decision-text.js';
import { runDefinition } from '../loop/run-definition.js';
import type { StopReason } from '../loop/stop-conditions.js';
import { stateOf, TURN_NODE, type DefinitionRun, type DefinitionRunState } from './definition-runs.js';
import type { RunReview } from './run-shape.js';
import type { NodeResult } from './step-driver.js';

export interface TurnDeps {
  llm: LlmGateway;
  tools: ToolRegistry;
}

/**
 * The one node of a definition run: the person's decision, if one came since the last turn, is appended as their
 * message (once: it is saved with this node's result), then the definition runs on the one loop. A turn that
 * ends waiting for a person suspends the run at this node with what it asks; a final answer ends the run.
 */
export async function runTurn(deps: TurnDeps, definition: AgentDefinition<string>, run: DefinitionRun, trace: TraceScope): Promise<NodeResult<{ state?: DefinitionRunState }>> {
  const saved = withReplyApplied(run);
  const { messages } = saved;
  const outcome = await runDefinition<string, string>(definition, {
    llm: deps.llm,
    trace,
    registry: definition.tools.length ? deps.tools : undefined,
    messages,
  });
  const state: DefinitionRunState = { ...saved, messages: outcome.messages, traceIds: [...(saved.traceIds ?? []), trace.traceId] };
  if (outcome.kind === 'waiting') {
    const prompt = waitingPrompt(outcome.content, outcome.decision);
    return {
      step: { type: 'turn', outcome: 'suspended', next: 'person', detail: { awaiting: outcome.awaiting, action: outcome.action } },
      update: {
        nextNode: TURN_NODE, status: 'SUSPENDED', onApprove: TURN_NODE, onReject: TURN_NODE, state,
        reviewRequest: { awaiting: outcome.awaiting === 'answer' ? 'answer' : 'decision', action: outcome.action, prompt },
      },
    };
  }
  if (outcome.kind === 'final') {
    const finalMessages = outcome.messages.at(-1)?.role === 'assistant' ? outcome.messages : [...outcome.messages, { role: 'assistant' as const, content: outcome.content }];
    return { step: { type: 'turn', outcome: 'pass', next: 'end' }, update: { nextNode: 'end', status: 'RUNNING', state: { ...state, messages: finalMessages, answer: outcome.value } } };
  }
  return { step: { type: 'turn', outcome: 'error', next: 'end_error', detail: { reason: outcome.reason } }, update: { nextNode: 'end_error', status: 'RUNNING', state, error: stoppedText(outcome.reason) } };
}

/** Why the turn ended without an answer, for the person who reads the run: a cut-off answer is never kept. */
function stoppedText(reason: StopReason): string {
  if (reason === 'truncated') return "the agent stopped without an answer: the model's answer was cut off by its output token limit before it was complete (truncated), so it was not used; ask a narrower question, or raise the agent's model.max_tokens";
  if (reason === 'retries_exhausted') return 'the agent stopped without an answer: the model gave no usable answer after several tries; start the run again, or ask in other words';
  return `the agent stopped without an answer: ${reason}`;
}

/**
 * The run's state with the person's reply, if one came since the last turn, appended as their message and marked
 * applied: what a turn starts from, and what a run the model failed keeps, so the reply is never asked for twice.
 */
export function withReplyApplied(run: DefinitionRun): DefinitionRunState {
  const saved = stateOf(run);
  const review = run.review as RunReview | null;
  if (!review || review.decidedAt === saved.appliedDecisionAt) return saved;
  return { ...saved, messages: [...saved.messages, { role: 'user', content: replyOf(review) }], appliedDecisionAt: review.decidedAt };
}

/** What the person said, as the model reads it on the next turn. */
function replyOf(review: RunReview): string {
  if (review.decision === 'answer') return review.answer ?? '';
  const verdict = review.decision === 'approve' ? 'Approved.' : 'Rejected.';
  return review.comment ? `${verdict} ${review.comment}` : verdict;
}
