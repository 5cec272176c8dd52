import { create } from 'zustand';
import { api, ApiError, onUnauthorized, type Me } from '../api';
import { readToken, writeToken } from '../api/token-storage';

/** Why the sign-in screen is showing, rendered as a message above the form. */
export type SessionNotice =
  | { type: 'signedOut' }
  | { type: 'sessionEnded'; error: ApiError }
  | { type: 'signInFailed'; error: unknown };

type SessionStatus = 'checking' | 'signedOut' | 'signedIn' | 'unreachable';

interface SessionState {
  status: SessionStatus;
  user: Me | null;
  notice: SessionNotice | null;
  isSubmitting: boolean;
  /** Error from the last start-up check when the server could not be reached; the token is kept. */
  startupError: unknown;
  start(): Promise<void>;
  signInWithToken(token: string): Promise<void>;
  signOut(): void;
}

/** Removes `?login=` before the code is exchanged, so a reload or a shared URL never replays a one-time code. */
function takeLoginCode(): string | null {
  const url = new URL(window.location.href);
  const code = url.searchParams.get('login');
  if (code === null) return null;
  url.searchParams.delete('login');
  window.history.replaceState(window.history.state, '', `${url.pathname}${url.search}${url.hash}`);
  return code;
}

export const useSessionStore = create<SessionState>()((set, get) => {
  // Any 401 means the token is gone or revoked: drop it and show the server's reason on the sign-in screen.
  onUnauthorized((error) => {
    writeToken(null);
    set({ status: 'signedOut', user: null, notice: { type: 'sessionEnded', error } });
  });

  async function loadUser(): Promise<void> {
    try {
      const user = await api.me();
      set({ status: 'signedIn', user, notice: null, startupError: null });
    } catch (error) {
      if (error instanceof ApiError && error.status === 401) return; // handled by the 401 listener
      set({ status: 'unreachable', startupError: error });
    }
  }

  return {
    status: 'checking',
    user: null,
    notice: null,
    isSubmitting: false,
    startupError: null,

    async start() {
      set({ status: 'checking', startupError: null });
      const code = takeLoginCode();
      if (code !== null) {
        try {
          const { token } = await api.login(code);
          writeToken(token);
        } catch (error) {
          set({ status: 'signedOut', notice: { type: 'signInFailed', error } });
          return;
        }
      }
      if (!readToken()) {
        set({ status: 'signedOut' });
        return;
      }
      await loadUser();
    },

    async signInWithToken(token) {
      const trimmed = token.trim();
      if (!trimmed || get().isSubmitting) return;
      set({ isSubmitting: true });
      writeToken(trimmed);
      try {
        const user = await api.me();
        set({ status: 'signedIn', user, notice: null, startupError: null });
      } catch (error) {
        // A 401 already cleared the token; replace its "session ended" notice, since there was no session yet.
        writeToken(null);
        set({ status: 'signedOut', user: null, notice: { type: 'signInFailed', error } });
      } finally {
        set({ isSubmitting: false });
      }
    },

    signOut() {
      writeToken(null);
      set({ status: 'signedOut', user: null, notice: { type: 'signedOut' } });
    },
  };
});
