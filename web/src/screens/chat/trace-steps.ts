import type { TraceSpan } from '../../api';

/** One tool call of a round, as the step span records it. */
export interface StepAction {
  tool: string;
  /** JSON text as the model wrote it. */
  arguments: string;
}

/** A `step` span of the agent loop read for people: what the model thought, did and saw in that round. */
export interface TraceStep {
  span: TraceSpan;
  /** answer, tools, tool_failed, correction (or what a later loop records). */
  outcome?: string;
  thought?: string;
  reasoning?: string;
  actions: StepAction[];
  observations: string[];
  /** A rejected answer's problems, sent back to the model. */
  problems: string[];
  /** The llm, tool and retrieval spans that ran inside this step. */
  children: TraceSpan[];
  /** Tokens of the step: a step span records none itself, its model calls do. */
  promptTokens: number;
  completionTokens: number;
}

export interface TraceOutline {
  steps: TraceStep[];
  /** Spans outside every step (a run without the loop, a router call before it). */
  others: TraceSpan[];
}

function record(value: unknown): Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

function text(value: unknown): string | undefined {
  return typeof value === 'string' && value.trim() !== '' ? value : undefined;
}

function strings(value: unknown): string[] {
  return Array.isArray(value) ? value.map((item) => (typeof item === 'string' ? item : JSON.stringify(item))) : [];
}

function actions(value: unknown): StepAction[] {
  if (!Array.isArray(value)) return [];
  return value.map((item) => {
    const action = record(item);
    const args = action.arguments;
    return { tool: String(action.tool ?? action.name ?? '?'), arguments: typeof args === 'string' ? args : JSON.stringify(args ?? {}) };
  });
}

function startMs(span: TraceSpan): number {
  const ms = Date.parse(span.startedAt);
  return Number.isNaN(ms) ? 0 : ms;
}

/**
 * Reads the step spans (the output src/runtime/loop writes: thought, actions, observations) and places every
 * other span in the step whose time window holds its start; steps can nest (a soft rule's rounds), so the
 * innermost, i.e. latest-starting, such step takes it. Spans keep the order the trace lists them in.
 */
export function outlineTrace(spans: TraceSpan[]): TraceOutline {
  const steps: TraceStep[] = spans
    .filter((span) => span.kind === 'step')
    .map((span) => {
      const output = record(span.output);
      return {
        span,
        outcome: text(output.outcome),
        thought: text(output.thought),
        reasoning: text(output.reasoning),
        actions: actions(output.actions),
        observations: strings(output.observations),
        problems: strings(output.problems),
        children: [] as TraceSpan[],
        promptTokens: span.promptTokens,
        completionTokens: span.completionTokens,
      };
    });
  const others: TraceSpan[] = [];
  for (const span of spans) {
    if (span.kind === 'step') continue;
    const at = startMs(span);
    let owner: TraceStep | undefined;
    for (const step of steps) {
      const from = startMs(step.span);
      if (at >= from && at <= from + step.span.durationMs && (!owner || from >= startMs(owner.span))) owner = step;
    }
    if (owner) {
      owner.children.push(span);
      owner.promptTokens += span.promptTokens;
      owner.completionTokens += span.completionTokens;
    } else others.push(span);
  }
  return { steps, others };
}
