import { create } from 'zustand';
import {
  api,
  protocolApi,
  type ActionCardPayload,
  type ProtocolChatResponse,
  type ProtocolContextResponse,
  type ProtocolExportFormat,
  type ProtocolSummary,
  type StageCompleteResponse,
} from '../api';
import type { ConversationTurn } from '../api/conversations-api';
import { saveFile } from '../components/save-file';

/** One message to the Protocol Agent and its reply, as this session saw it. */
export interface ProtocolTurn {
  id: number;
  input: string;
  /** The reply as it is written (text_delta); the final response replaces it. */
  streamText: string;
  result?: ProtocolChatResponse;
  /** The request failed: no reply came back. */
  requestError?: unknown;
  /** The researcher pressed Stop; the text stays as far as it got. */
  isStopped: boolean;
}

/** The last "Complete stage": refused with the issues to fix, or accepted with the stage's summary. */
export type StageCompletion = { status: 'idle' } | { status: 'completing' } | { status: 'done'; response: StageCompleteResponse } | { status: 'failed'; error: unknown };

interface ProtocolAgentState {
  protocols: ProtocolSummary[];
  hasLoadedList: boolean;
  listError: unknown;
  isCreating: boolean;
  createError: unknown;
  /** The protocol on screen. */
  activeId: string | null;
  context: ProtocolContextResponse | null;
  contextError: unknown;
  /** The protocol's messages before this session, from its conversation log. */
  earlier: { turns: ConversationTurn[]; isLoading: boolean; error: unknown };
  turns: ProtocolTurn[];
  isRunning: boolean;
  /** The current stage's cards: from the latest reply, the stage just entered, or the context when opened. */
  actionCards: ActionCardPayload[];
  completion: StageCompletion;
  /** The context field being saved, and the last save that failed. */
  savingField: string | null;
  saveError: { field: string; error: unknown } | null;
  exporting: ProtocolExportFormat | null;
  exportError: unknown;

  loadList(): Promise<void>;
  /** Starts a protocol and opens it; resolves to its id, or null when it could not be started. */
  create(title?: string): Promise<string | null>;
  /** Shows a protocol: its context, stage and cards; this session's turns of another protocol go. */
  open(conversationId: string): Promise<void>;
  send(message: string): Promise<void>;
  stop(): void;
  completeStage(): Promise<void>;
  /** Adds `value`'s keys to a context field; true when saved. */
  saveField(field: string, value: Record<string, unknown>): Promise<boolean>;
  download(format: ProtocolExportFormat): Promise<void>;
  /** The protocol recorded an action card's result (the calculator's "Use in protocol"): show what it holds now. */
  applyContext(context: ProtocolContextResponse): void;
  reset(): void;
}

const INITIAL = {
  protocols: [],
  hasLoadedList: false,
  listError: null,
  isCreating: false,
  createError: null,
  activeId: null,
  context: null,
  contextError: null,
  earlier: { turns: [], isLoading: false, error: null },
  turns: [],
  isRunning: false,
  actionCards: [],
  completion: { status: 'idle' } as StageCompletion,
  savingField: null,
  saveError: null,
  exporting: null,
  exportError: null,
} satisfies Partial<ProtocolAgentState>;

let nextTurnId = 1;

export const useProtocolAgentStore = create<ProtocolAgentState>()((set, get) => {
  let running: AbortController | null = null;
  /** Bumped when another protocol opens, so a late answer for the previous one is dropped. */
  let generation = 0;

  function updateTurn(turnId: number, change: (turn: ProtocolTurn) => ProtocolTurn): void {
    set((state) => ({ turns: state.turns.map((turn) => (turn.id === turnId ? change(turn) : turn)) }));
  }

  /** The state panel and the list follow every change the server made (a reply, a completed stage, an edit). */
  async function refresh(conversationId: string): Promise<void> {
    const seen = generation;
    try {
      const context = await protocolApi.getContext(conversationId);
      if (seen === generation) set({ context, contextError: null });
    } catch (contextError) {
      if (seen === generation) set({ contextError });
    }
    void get().loadList();
  }

  return {
    ...INITIAL,

    async loadList() {
      try {
        set({ protocols: await protocolApi.list(), hasLoadedList: true, listError: null });
      } catch (listError) {
        set({ hasLoadedList: true, listError });
      }
    },

    async create(title) {
      if (get().isCreating) return null;
      set({ isCreating: true, createError: null });
      try {
        const started = await protocolApi.start(title ? { title } : {});
        void get().loadList();
        await get().open(started.conversationId);
        return started.conversationId;
      } catch (createError) {
        set({ createError });
        return null;
      } finally {
        set({ isCreating: false });
      }
    },

    async open(conversationId) {
      if (get().activeId === conversationId && get().context) return;
      running?.abort();
      generation += 1;
      const seen = generation;
      set({
        activeId: conversationId,
        context: null,
        contextError: null,
        earlier: { turns: [], isLoading: true, error: null },
        turns: [],
        actionCards: [],
        completion: { status: 'idle' },
        saveError: null,
        exportError: null,
      });
      const loadEarlier = async () => {
        try {
          const { turns } = await api.conversations.get(conversationId);
          if (seen === generation) set({ earlier: { turns, isLoading: false, error: null } });
        } catch (error) {
          if (seen === generation) set({ earlier: { turns: [], isLoading: false, error } });
        }
      };
      const loadContext = async () => {
        try {
          const context = await protocolApi.getContext(conversationId);
          if (seen === generation) set({ context, actionCards: context.actionCards });
        } catch (contextError) {
          if (seen === generation) set({ contextError });
        }
      };
      await Promise.all([loadContext(), loadEarlier()]);
    },

    async send(input) {
      const message = input.trim();
      const conversationId = get().activeId;
      if (!message || !conversationId || get().isRunning) return;
      const turn: ProtocolTurn = { id: nextTurnId++, input: message, streamText: '', isStopped: false };
      set((state) => ({ isRunning: true, turns: [...state.turns, turn], completion: { status: 'idle' } }));
      const controller = new AbortController();
      running = controller;
      try {
        const result = await protocolApi.streamChat(
          { conversationId, message },
          {
            signal: controller.signal,
            onEvent: (event) => {
              if (event.event === 'text_delta') updateTurn(turn.id, (t) => ({ ...t, streamText: t.streamText + event.data.text }));
            },
          },
        );
        updateTurn(turn.id, (t) => ({ ...t, result }));
        set({ actionCards: result.actionCards });
      } catch (requestError) {
        if (controller.signal.aborted) updateTurn(turn.id, (t) => ({ ...t, isStopped: true }));
        else updateTurn(turn.id, (t) => ({ ...t, requestError }));
      } finally {
        if (running === controller) running = null;
        set({ isRunning: false });
      }
      if (get().activeId === conversationId) await refresh(conversationId);
    },

    stop() {
      running?.abort();
    },

    async completeStage() {
      const conversationId = get().activeId;
      if (!conversationId || get().completion.status === 'completing') return;
      set({ completion: { status: 'completing' } });
      try {
        const response = await protocolApi.completeStage(conversationId);
        set({ completion: { status: 'done', response } });
        if (response.success) set({ actionCards: response.nextStageActionCards ?? [] });
        await refresh(conversationId);
      } catch (error) {
        set({ completion: { status: 'failed', error } });
      }
    },

    async saveField(field, value) {
      const conversationId = get().activeId;
      if (!conversationId || get().savingField) return false;
      set({ savingField: field, saveError: null });
      try {
        const context = await protocolApi.patchContext(conversationId, field, value);
        if (get().activeId === conversationId) set({ context, completion: { status: 'idle' } });
        return true;
      } catch (error) {
        set({ saveError: { field, error } });
        return false;
      } finally {
        set({ savingField: null });
      }
    },

    async download(format) {
      const conversationId = get().activeId;
      if (!conversationId || get().exporting) return;
      set({ exporting: format, exportError: null });
      try {
        const file = await protocolApi.exportFile(conversationId, format);
        saveFile(file.blob, file.filename ?? `protocol-${conversationId}.${format}`);
      } catch (exportError) {
        set({ exportError });
      } finally {
        set({ exporting: null });
      }
    },

    applyContext(context) {
      // The protocol page opens on this context rather than fetching it again; its cards now link the new inputs.
      if (get().activeId === context.conversationId) set({ context, actionCards: context.actionCards });
    },

    reset() {
      running?.abort();
      generation += 1;
      set({ ...INITIAL });
    },
  };
});
