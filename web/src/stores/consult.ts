import { create } from 'zustand';
import { consultApi, type ConsultReply, type ConsultSession, type ConsultSummary, type DossierFormat } from '../api';
import { newClientMessageId } from '../api/consult-api';
import { saveFile } from '../components/save-file';
import type { StreamingTool } from './chat-stream';
import { createConversationStream, streamConversationOf, type StreamTurn } from './conversation-stream';

/**
 * The message being answered, shown as it is written until the consult's turns include it: the reply as it streams
 * (its text and the tools the consult used), then the result, whose response replaces the text (it may lead with
 * urgent advice). `imageUrl` is the chosen image's local preview, until the server's copy replaces it; `image` and
 * `clientMessageId` are what a retry sends again.
 */
interface LiveMessage {
  imageUrl: string | null;
  image: File | null;
  clientMessageId: string;
}
export type LiveTurn = StreamTurn<ConsultReply, LiveMessage>;

/** The message in flight per consult, folded from the run events as every chat page's are. */
export const useConsultTurnsStore = createConversationStream<ConsultReply, LiveMessage>();

/** The image chosen for the next message, with its preview. */
export interface ChosenImage {
  file: File;
  previewUrl: string;
}

interface ConsultState {
  sessions: ConsultSummary[];
  hasLoadedList: boolean;
  listError: unknown;
  isCreating: boolean;
  createError: unknown;
  /** The consult on screen. */
  activeId: string | null;
  session: ConsultSession | null;
  sessionError: unknown;
  /** The image for the next message; the server checks its bytes and size when it is sent. */
  image: ChosenImage | null;
  /** Object URLs of the consult's uploaded images, by attachment id, fetched once with the bearer token. */
  attachmentUrls: Record<string, string>;
  /**
   * The tools each reply of this session used, by its position in the consult's turns: the recorded turns hold the
   * text only, so what the stream showed is kept for the replies it showed.
   */
  toolsUsed: Record<number, StreamingTool[]>;
  dossier: Record<string, unknown> | null;
  isLoadingDossier: boolean;
  dossierError: unknown;
  downloading: Exclude<DossierFormat, 'json'> | null;
  downloadError: unknown;

  loadList(): Promise<void>;
  /** Starts a consult; resolves to its id, or null when it could not be started. */
  create(title?: string): Promise<string | null>;
  /** Shows a consult with its turns; what this page held of another consult goes. */
  open(sessionId: string): Promise<void>;
  /** Sends a message (and the chosen image, if any) under a new client message id, and streams the reply. */
  send(message: string): Promise<void>;
  /** Sends the message whose request failed again, with its image and its id: the consult takes it once. */
  retry(): Promise<void>;
  stop(): void;
  chooseImage(file: File): void;
  clearImage(): void;
  loadAttachment(attachmentId: string): Promise<void>;
  loadDossier(): Promise<void>;
  download(format: Exclude<DossierFormat, 'json'>): Promise<void>;
  reset(): void;
}

const INITIAL = {
  sessions: [],
  hasLoadedList: false,
  listError: null,
  isCreating: false,
  createError: null,
  activeId: null,
  session: null,
  sessionError: null,
  image: null,
  attachmentUrls: {},
  toolsUsed: {},
  dossier: null,
  isLoadingDossier: false,
  dossierError: null,
  downloading: null,
  downloadError: null,
} satisfies Partial<ConsultState>;

/** The message on screen of a consult: the last one sent, until the reloaded turns hold it. */
export function liveTurnOf(state: Pick<ReturnType<typeof useConsultTurnsStore.getState>, 'byScope'>, sessionId: string | null): LiveTurn | null {
  return sessionId ? (streamConversationOf(state, sessionId).turns.at(-1) ?? null) : null;
}

/** Whether the consult on screen is answering a message. */
export function useConsultIsRunning(): boolean {
  const activeId = useConsultStore((state) => state.activeId);
  return useConsultTurnsStore((state) => (activeId ? streamConversationOf(state, activeId).isRunning : false));
}

/** The message on screen of the consult on screen, or null. */
export function useLiveTurn(): LiveTurn | null {
  const activeId = useConsultStore((state) => state.activeId);
  return useConsultTurnsStore((state) => liveTurnOf(state, activeId));
}

/** What the reply changed, shown at once (risk banner, context, options) while the turns are fetched again. */
function withReply(session: ConsultSession, reply: ConsultReply): ConsultSession {
  return {
    ...session,
    riskLevel: reply.riskLevel,
    redFlags: reply.redFlags,
    medicalContext: reply.medicalContext,
    quickOptions: reply.quickOptions,
    status: reply.action === 'diagnose' ? 'diagnosed' : session.status,
  };
}

export const useConsultStore = create<ConsultState>()((set, get) => {
  /** Bumped when another consult opens (or the user signs out), so a late answer for the previous one is dropped. */
  let generation = 0;
  const loadingAttachments = new Set<string>();
  const turns = () => useConsultTurnsStore.getState();

  const revoke = (url: string | null | undefined) => {
    if (url) URL.revokeObjectURL(url);
  };

  /** The message on screen of a consult goes, its preview released; one still being answered is stopped. */
  function dropLive(sessionId: string | null): void {
    if (!sessionId) return;
    revoke(liveTurnOf(turns(), sessionId)?.imageUrl);
    turns().clear(sessionId);
  }

  /** Streams one message's reply into the page, then shows the consult as saved with it. */
  async function deliver(sessionId: string, message: { input: string } & LiveMessage): Promise<void> {
    const seen = generation;
    const outcome = await turns().send(sessionId, message, (options) =>
      consultApi.streamMessage(sessionId, { message: message.input, image: message.image ?? undefined, clientMessageId: message.clientMessageId }, options),
    );
    if (outcome.status !== 'answered' || seen !== generation) return;
    set((state) => ({ session: state.session ? withReply(state.session, outcome.result) : null, dossier: null }));
    void get().loadList();
    const refreshed = await consultApi.get(sessionId).catch(() => null);
    // The consult's turns now hold this message and its reply; the live copy goes (kept if the reload failed).
    const live = liveTurnOf(turns(), sessionId);
    if (refreshed && seen === generation && live?.result === outcome.result) {
      const reply = refreshed.turns.findLastIndex((turn) => turn.role !== 'user');
      set((state) => ({ session: refreshed, toolsUsed: outcome.streaming.tools.length > 0 && reply >= 0 ? { ...state.toolsUsed, [reply]: outcome.streaming.tools } : state.toolsUsed }));
      dropLive(sessionId);
    }
  }

  /** Everything that belongs to the consult on screen, its object URLs released. */
  function dropConsult(): Partial<ConsultState> {
    const state = get();
    generation += 1;
    dropLive(state.activeId);
    revoke(state.image?.previewUrl);
    Object.values(state.attachmentUrls).forEach(revoke);
    loadingAttachments.clear();
    return { session: null, sessionError: null, image: null, attachmentUrls: {}, toolsUsed: {}, dossier: null, dossierError: null, downloadError: null };
  }

  return {
    ...INITIAL,

    async loadList() {
      try {
        set({ sessions: await consultApi.list(), hasLoadedList: true, listError: null });
      } catch (listError) {
        set({ hasLoadedList: true, listError });
      }
    },

    async create(title) {
      if (get().isCreating) return null;
      set({ isCreating: true, createError: null });
      try {
        const { sessionId } = await consultApi.start(title ? { title } : {});
        void get().loadList();
        return sessionId;
      } catch (createError) {
        set({ createError });
        return null;
      } finally {
        set({ isCreating: false });
      }
    },

    async open(sessionId) {
      if (get().activeId === sessionId && get().session) return;
      set({ ...dropConsult(), activeId: sessionId });
      const seen = generation;
      try {
        const session = await consultApi.get(sessionId);
        if (seen === generation) set({ session });
      } catch (sessionError) {
        if (seen === generation) set({ sessionError });
      }
    },

    async send(input) {
      const message = input.trim();
      const { activeId: sessionId, session, image } = get();
      if (!message || !sessionId || !session || streamConversationOf(turns(), sessionId).isRunning) return;
      // The new message takes the place of the previous one still on screen (kept only if its reload failed).
      dropLive(sessionId);
      // The chosen image now belongs to the turn: its preview shows there, and the next message starts without one.
      set({ image: null });
      await deliver(sessionId, { input: message, imageUrl: image?.previewUrl ?? null, image: image?.file ?? null, clientMessageId: newClientMessageId() });
    },

    async retry() {
      const sessionId = get().activeId;
      const failed = liveTurnOf(turns(), sessionId);
      if (!sessionId || !get().session || !failed || failed.requestError === undefined || streamConversationOf(turns(), sessionId).isRunning) return;
      // The failed request may have been stored before it failed (a 503, a dropped connection): under the same id the
      // consult answers it once. Its preview stays: it belongs to the message sent again.
      turns().clear(sessionId);
      await deliver(sessionId, { input: failed.input, imageUrl: failed.imageUrl, image: failed.image, clientMessageId: failed.clientMessageId });
    },

    stop() {
      const sessionId = get().activeId;
      if (sessionId) turns().stop(sessionId);
    },

    chooseImage(file) {
      revoke(get().image?.previewUrl);
      set({ image: { file, previewUrl: URL.createObjectURL(file) } });
    },

    clearImage() {
      revoke(get().image?.previewUrl);
      set({ image: null });
    },

    async loadAttachment(attachmentId) {
      const sessionId = get().activeId;
      if (!sessionId || get().attachmentUrls[attachmentId] || loadingAttachments.has(attachmentId)) return;
      loadingAttachments.add(attachmentId);
      const seen = generation;
      try {
        const file = await consultApi.attachment(sessionId, attachmentId);
        if (seen !== generation) return;
        const url = URL.createObjectURL(file.blob);
        set((state) => ({ attachmentUrls: { ...state.attachmentUrls, [attachmentId]: url } }));
      } catch {
        // The turn then shows the image's alt text; the conversation itself is unaffected.
      } finally {
        if (seen === generation) loadingAttachments.delete(attachmentId);
      }
    },

    async loadDossier() {
      const sessionId = get().activeId;
      if (!sessionId || get().isLoadingDossier) return;
      set({ isLoadingDossier: true, dossierError: null });
      const seen = generation;
      try {
        const dossier = await consultApi.dossier(sessionId);
        if (seen === generation) set({ dossier });
        // Making the dossier is recorded on the consult (its id and time); show that too.
        const session = await consultApi.get(sessionId).catch(() => null);
        if (session && seen === generation && !streamConversationOf(turns(), sessionId).isRunning) set({ session });
      } catch (dossierError) {
        if (seen === generation) set({ dossierError });
      } finally {
        if (seen === generation) set({ isLoadingDossier: false });
      }
    },

    async download(format) {
      const sessionId = get().activeId;
      if (!sessionId || get().downloading) return;
      set({ downloading: format, downloadError: null });
      try {
        const file = await consultApi.dossierFile(sessionId, format);
        saveFile(file.blob, file.filename ?? `consult-${sessionId.slice(0, 8)}.${format}`);
      } catch (downloadError) {
        set({ downloadError });
      } finally {
        set({ downloading: null });
      }
    },

    reset() {
      set({ ...INITIAL, ...dropConsult() });
      turns().reset();
    },
  };
});
