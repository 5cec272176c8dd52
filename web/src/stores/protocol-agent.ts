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
import { createConversationStream, streamConversationOf, type StreamConversation, type StreamTurn } from './conversation-stream';

/** One message to the Protocol Agent and its reply, as this session saw it: streamed, then the final response. */
export type ProtocolTurn = StreamTurn<ProtocolChatResponse>;

/** This session's messages per protocol (its conversation id), folded from the run events as every chat page's are. */
export const useProtocolTurnsStore = createConversationStream<ProtocolChatResponse>();

export function protocolConversationOf(state: Pick<ReturnType<typeof useProtocolTurnsStore.getState>, 'byScope'>, conversationId: string | null): StreamConversation<ProtocolChatResponse> {
  return streamConversationOf(state, conversationId ?? '');
}

/** This session's messages to the protocol on screen, and whether one is being answered. */
export function useProtocolConversation(): StreamConversation<ProtocolChatResponse> {
  const activeId = useProtocolAgentStore((state) => state.activeId);
  return useProtocolTurnsStore((state) => protocolConversationOf(state, activeId));
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
  actionCards: [],
  completion: { status: 'idle' } as StageCompletion,
  savingField: null,
  saveError: null,
  exporting: null,
  exportError: null,
} satisfies Partial<ProtocolAgentState>;

export const useProtocolAgentStore = create<ProtocolAgentState>()((set, get) => {
  /** Bumped when another protocol opens, so a late answer for the previous one is dropped. */
  let generation = 0;
  const turnStore = () => useProtocolTurnsStore.getState();

  /** This session's messages to the protocol on screen go; one still being answered is stopped. */
  function dropTurns(): void {
    const activeId = get().activeId;
    if (activeId) turnStore().clear(activeId);
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
      dropTurns();
      generation += 1;
      const seen = generation;
      set({
        activeId: conversationId,
        context: null,
        contextError: null,
        earlier: { turns: [], isLoading: true, error: null },
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
      if (!message || !conversationId || protocolConversationOf(turnStore(), conversationId).isRunning) return;
      set({ completion: { status: 'idle' } });
      const outcome = await turnStore().send(conversationId, { input: message }, (options) => protocolApi.streamChat({ conversationId, message }, options));
      if (outcome.status === 'refused') return;
      if (outcome.status === 'answered' && get().activeId === conversationId) set({ actionCards: outcome.result.actionCards });
      if (get().activeId === conversationId) await refresh(conversationId);
    },

    stop() {
      const conversationId = get().activeId;
      if (conversationId) turnStore().stop(conversationId);
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
      turnStore().reset();
      generation += 1;
      set({ ...INITIAL });
    },
  };
});
