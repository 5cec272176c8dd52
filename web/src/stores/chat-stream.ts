import type { RunProgressEvent } from '../api';

/** What a run that stopped for a person asks of them (the `waiting` event). */
export type WaitingFor = Omit<Extract<RunProgressEvent, { event: 'waiting' }>['data'], 'type'>;

/** A tool call of a streamed turn, from the moment the model asks for it. */
export interface StreamingTool {
  callId: string;
  name: string;
  status: 'running' | 'ok' | 'failed';
  error?: string;
}

/** What a turn shows while its answer arrives; the final AgentResult replaces it. */
export interface StreamingAnswer {
  /** The model's visible text so far, rounds separated by a blank line. */
  text: string;
  /** The round the last text came from, so a new round starts a new paragraph. */
  lastRound: number;
  tools: StreamingTool[];
  /** The user pressed Stop: the text stays as far as it got. */
  isStopped: boolean;
  /** The run's trace, known from its first event, so a stopped run can still be looked up. */
  traceId?: string;
  /** Set when the run stopped for the user: what it asks of them. */
  waiting?: WaitingFor;
}

export const EMPTY_STREAM: StreamingAnswer = { text: '', lastRound: -1, tools: [], isStopped: false };

export function applyStreamEvent(answer: StreamingAnswer, event: RunProgressEvent): StreamingAnswer {
  switch (event.event) {
    case 'run_started':
      return { ...answer, traceId: event.data.traceId };
    case 'text_delta': {
      const separator = answer.text && event.data.round !== answer.lastRound ? '\n\n' : '';
      return { ...answer, text: answer.text + separator + event.data.text, lastRound: event.data.round };
    }
    case 'tool_call_started':
      return { ...answer, tools: [...answer.tools, { callId: event.data.callId, name: event.data.name, status: 'running' }] };
    case 'tool_call_finished':
      return {
        ...answer,
        tools: answer.tools.map((tool) =>
          tool.callId === event.data.callId ? { ...tool, status: event.data.success ? 'ok' : 'failed', ...(event.data.error ? { error: event.data.error } : {}) } : tool,
        ),
      };
    case 'waiting':
      return { ...answer, waiting: waitingFor(event.data) };
    default:
      return answer;
  }
}

export function waitingFor({ runId, awaiting, prompt }: Extract<RunProgressEvent, { event: 'waiting' }>['data']): WaitingFor {
  return runId ? { runId, awaiting, prompt } : { awaiting, prompt };
}

const STRUCTURED_START = /^\s*(?:```|\{|\[)/;

/**
 * Structured scenarios answer in JSON, which is hard to read while it arrives. When the text so far is a JSON
 * object with the answer field of a built-in output type (`answer` of qa_answer, `summary` of
 * data_check_report), show that string as far as it has come; other JSON not at all; plain text as it is. The final
 * result replaces the preview either way.
 */
export function previewText(text: string): string {
  const start = /^\s*(?:```(?:json)?\s*)?\{[\s\S]*?"(?:answer|summary)"\s*:\s*"/.exec(text);
  // JSON without its answer string (the key not yet arrived, or a model answer of the wrong shape) is not for a
  // person to read: nothing shows until the answer does, or the result replaces the preview.
  if (!start) return STRUCTURED_START.test(text) ? '' : text;
  let preview = '';
  for (let i = start[0].length; i < text.length; i++) {
    const char = text[i]!;
    if (char === '"') return preview;
    if (char !== '\\') {
      preview += char;
      continue;
    }
    const next = text[i + 1];
    if (next === undefined) return preview; // the escape's second half has not arrived yet
    if (next === 'u') {
      const hex = text.slice(i + 2, i + 6);
      if (!/^[0-9a-fA-F]{4}$/.test(hex)) return preview;
      preview += String.fromCharCode(parseInt(hex, 16));
      i += 5;
      continue;
    }
    preview += ({ n: '\n', t: '\t', r: '\r', b: '\b', f: '\f' } as Record<string, string>)[next] ?? next;
    i++;
  }
  return preview;
}
