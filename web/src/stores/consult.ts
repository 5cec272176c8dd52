import { create } from 'zustand';
import { consultApi, type ConsultReply, type ConsultSession, type ConsultSummary, type DossierFormat } from '../api';
import { saveFile } from '../components/save-file';

/** The message being answered: shown as it is written until the consult's turns include it. */
export interface LiveTurn {
  id: number;
  message: string;
  /** The chosen image's local preview, until the server's copy replaces it. */
  imageUrl: string | null;
  /** The reply as it is written (text_delta); the result's response replaces it (it may lead with urgent advice). */
  streamText: string;
  result?: ConsultReply;
  requestError?: unknown;
  isStopped: boolean;
}

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
  live: LiveTurn | null;
  isRunning: boolean;
  /** The image for the next message; the server checks its bytes and size when it is sent. */
  image: ChosenImage | null;
  /** Object URLs of the consult's uploaded images, by attachment id, fetched once with the bearer token. */
  attachmentUrls: Record<string, string>;
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
  /** Sends a message (and the chosen image, if any) and streams the reply. */
  send(message: string): Promise<void>;
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
  live: null,
  isRunning: false,
  image: null,
  attachmentUrls: {},
  dossier: null,
  isLoadingDossier: false,
  dossierError: null,
  downloading: null,
  downloadError: null,
} satisfies Partial<ConsultState>;

let nextTurnId = 1;

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
  let running: AbortController | null = null;
  /** Bumped when another consult opens (or the user signs out), so a late answer for the previous one is dropped. */
  let generation = 0;
  const loadingAttachments = new Set<string>();

  const revoke = (url: string | null | undefined) => {
    if (url) URL.revokeObjectURL(url);
  };

  function updateLive(turnId: number, change: (turn: LiveTurn) => LiveTurn): void {
    set((state) => (state.live?.id === turnId ? { live: change(state.live) } : {}));
  }

  /** Everything that belongs to the consult on screen, its object URLs released. */
  function dropConsult(): Partial<ConsultState> {
    const state = get();
    running?.abort();
    generation += 1;
    revoke(state.live?.imageUrl);
    revoke(state.image?.previewUrl);
    Object.values(state.attachmentUrls).forEach(revoke);
    loadingAttachments.clear();
    return { session: null, sessionError: null, live: null, isRunning: false, image: null, attachmentUrls: {}, dossier: null, dossierError: null, downloadError: null };
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
      const { activeId: sessionId, session, image, isRunning } = get();
      if (!message || !sessionId || !session || isRunning) return;
      revoke(get().live?.imageUrl);
      const turn: LiveTurn = { id: nextTurnId++, message, imageUrl: image?.previewUrl ?? null, streamText: '', isStopped: false };
      // The chosen image now belongs to the turn: its preview shows there, and the next message starts without one.
      set({ isRunning: true, live: turn, image: null });
      const seen = generation;
      const controller = new AbortController();
      running = controller;
      try {
        const result = await consultApi.streamMessage(sessionId, { message, image: image?.file }, {
          signal: controller.signal,
          onEvent: (event) => {
            if (event.event === 'text_delta') updateLive(turn.id, (t) => ({ ...t, streamText: t.streamText + event.data.text }));
          },
        });
        if (seen !== generation) return;
        updateLive(turn.id, (t) => ({ ...t, result }));
        set((state) => ({ session: state.session ? withReply(state.session, result) : null, dossier: null }));
        void get().loadList();
        const refreshed = await consultApi.get(sessionId).catch(() => null);
        // The consult's turns now hold this message and its reply; the live copy goes (kept if the reload failed).
        if (refreshed && seen === generation && get().live?.id === turn.id) {
          revoke(turn.imageUrl);
          set({ session: refreshed, live: null });
        }
      } catch (requestError) {
        if (seen !== generation) return;
        if (controller.signal.aborted) updateLive(turn.id, (t) => ({ ...t, isStopped: true }));
        else updateLive(turn.id, (t) => ({ ...t, requestError }));
      } finally {
        if (running === controller) running = null;
        if (seen === generation) set({ isRunning: false });
      }
    },

    stop() {
      running?.abort();
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
        if (session && seen === generation && !get().isRunning) set({ session });
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
    },
  };
});
