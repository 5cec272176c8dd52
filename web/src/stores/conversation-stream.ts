import { create } from 'zustand';
import type { RunProgressEvent } from '../api';
import { applyStreamEvent, EMPTY_STREAM, type StreamingAnswer } from './chat-stream';

/**
 * One message of a chat page and its answer, as this session saw it: the answer as it streams, then the route's
 * result; `Extra` is what a page keeps of the message (the documents a run was limited to, a consult's photo).
 */
export type StreamTurn<Result, Extra extends object = object> = Extra & {
  id: number;
  input: string;
  /** The answer as it arrives, folded from the run events; stays (marked stopped) when the user pressed Stop. */
  streaming: StreamingAnswer;
  /** The route's result; replaces the stream on screen once it arrives. */
  result?: Result;
  /** The request itself failed: no result came back. */
  requestError?: unknown;
};

export interface StreamConversation<Result, Extra extends object = object> {
  turns: StreamTurn<Result, Extra>[];
  isRunning: boolean;
}

/** How a message ended, for the page's own follow-up (remember the conversation, reload a consult, ...). */
export type StreamOutcome<Result> =
  | { status: 'answered'; result: Result; streaming: StreamingAnswer }
  | { status: 'stopped'; streaming: StreamingAnswer }
  | { status: 'failed'; error: unknown }
  /** Not sent: empty, or this conversation is still answering the previous message. */
  | { status: 'refused' };

/** The streaming call of a page's API client: POSTs the message and reports each run event until the result. */
export type StreamCall<Result> = (options: { signal: AbortSignal; onEvent(event: RunProgressEvent): void }) => Promise<Result>;

export interface ConversationStreamState<Result, Extra extends object = object> {
  /** The conversations of this kind of chat, by the page's scope (a scenario, project, consult or protocol id). */
  byScope: Record<string, StreamConversation<Result, Extra>>;
  /** Sends one message and folds its run events into a new turn; one message at a time per scope. */
  send(scope: string, message: { input: string } & Extra, call: StreamCall<Result>): Promise<StreamOutcome<Result>>;
  /** Stops the running message: the connection closes, and the server stops the run and marks its trace cancelled. */
  stop(scope: string): void;
  /** The scope's turns go (its running message is stopped). */
  clear(scope: string): void;
  reset(): void;
}

/** Shared by every empty scope, so a selector returns the same object until the scope has turns. */
const EMPTY_CONVERSATION: { turns: never[]; isRunning: false } = { turns: [], isRunning: false };

export function streamConversationOf<Result, Extra extends object>(state: Pick<ConversationStreamState<Result, Extra>, 'byScope'>, scope: string): StreamConversation<Result, Extra> {
  return state.byScope[scope] ?? EMPTY_CONVERSATION;
}

let nextTurnId = 1;

/**
 * The one conversation stream store of the console: every chat page (agent runs, the trial assistant, the consult,
 * the Protocol Agent) makes its store with this, so each folds the same run events the same way (text, tool calls,
 * plan and parts, waiting, a replaced answer) and stops the same way. A page's own state (documents, photos, the
 * protocol's context) stays in its own store, which calls `send` with its API client's streaming call.
 */
export function createConversationStream<Result, Extra extends object = object>() {
  return create<ConversationStreamState<Result, Extra>>()((set, get) => {
    /** The running message's request per scope, for Stop. */
    const running = new Map<string, AbortController>();

    function update(scope: string, change: (conversation: StreamConversation<Result, Extra>) => StreamConversation<Result, Extra>): void {
      set((state) => ({ byScope: { ...state.byScope, [scope]: change(streamConversationOf(state, scope)) } }));
    }

    /** Changes one turn; a turn cleared meanwhile (another consult opened, New conversation) stays gone. */
    function updateTurn(scope: string, turnId: number, change: (turn: StreamTurn<Result, Extra>) => StreamTurn<Result, Extra>): void {
      update(scope, (c) => ({ ...c, turns: c.turns.map((turn) => (turn.id === turnId ? change(turn) : turn)) }));
    }

    function streamingOf(scope: string, turnId: number): StreamingAnswer {
      return streamConversationOf(get(), scope).turns.find((turn) => turn.id === turnId)?.streaming ?? EMPTY_STREAM;
    }

    return {
      byScope: {},

      async send(scope, message, call) {
        const input = message.input.trim();
        // One message at a time per conversation: overlapping answers would be hard to read.
        if (!input || streamConversationOf(get(), scope).isRunning) return { status: 'refused' };
        const turn = { ...message, id: nextTurnId++, input, streaming: EMPTY_STREAM } as StreamTurn<Result, Extra>;
        update(scope, (c) => ({ ...c, isRunning: true, turns: [...c.turns, turn] }));
        const controller = new AbortController();
        running.set(scope, controller);
        try {
          const result = await call({
            signal: controller.signal,
            onEvent: (event) => updateTurn(scope, turn.id, (t) => ({ ...t, streaming: applyStreamEvent(t.streaming, event) })),
          });
          updateTurn(scope, turn.id, (t) => ({ ...t, result }));
          return { status: 'answered', result, streaming: streamingOf(scope, turn.id) };
        } catch (error) {
          if (controller.signal.aborted) {
            updateTurn(scope, turn.id, (t) => ({ ...t, streaming: { ...t.streaming, isStopped: true } }));
            return { status: 'stopped', streaming: streamingOf(scope, turn.id) };
          }
          updateTurn(scope, turn.id, (t) => ({ ...t, requestError: error }));
          return { status: 'failed', error };
        } finally {
          // After a clear the scope is no longer this message's (a new one may be running there).
          if (running.get(scope) === controller) {
            running.delete(scope);
            update(scope, (c) => ({ ...c, isRunning: false }));
          }
        }
      },

      stop(scope) {
        running.get(scope)?.abort();
      },

      clear(scope) {
        running.get(scope)?.abort();
        running.delete(scope);
        update(scope, () => EMPTY_CONVERSATION);
      },

      reset() {
        for (const controller of running.values()) controller.abort();
        running.clear();
        set({ byScope: {} });
      },
    };
  });
}
