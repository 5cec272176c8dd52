import { create } from 'zustand';
import { api, type AccountToken } from '../api';

export type UserTokens = { status: 'loading' } | { status: 'loaded'; tokens: AccountToken[] } | { status: 'error'; error: unknown };

export type TokenState = 'active' | 'expired' | 'revoked';

/** What a token can still do, as its row shows it. */
export function tokenState(token: AccountToken, now: number = Date.now()): TokenState {
  if (token.revokedAt) return 'revoked';
  if (token.expiresAt && Date.parse(token.expiresAt) <= now) return 'expired';
  return 'active';
}

interface TokensState {
  /** Tokens per user id: your own on the tokens page, anyone's on the admin users page. */
  byUser: Record<string, UserTokens>;
  /** Token ids whose revocation is in flight. */
  revoking: Record<string, boolean>;
  /** The last failed revocation, shown above the table it came from. */
  revokeError: { userId: string; error: unknown } | null;
  load(userId: string): Promise<void>;
  revoke(token: AccountToken): Promise<void>;
  reset(): void;
}

export const useTokensStore = create<TokensState>()((set, get) => ({
  byUser: {},
  revoking: {},
  revokeError: null,

  async load(userId) {
    const known = get().byUser[userId];
    // Keep the rows on screen while reloading; only the first load shows a spinner.
    if (!known || known.status === 'error') set((state) => ({ byUser: { ...state.byUser, [userId]: { status: 'loading' } } }));
    try {
      const tokens = await api.account.listTokens(userId);
      set((state) => ({ byUser: { ...state.byUser, [userId]: { status: 'loaded', tokens } } }));
    } catch (error) {
      set((state) => ({ byUser: { ...state.byUser, [userId]: { status: 'error', error } } }));
    }
  },

  async revoke(token) {
    if (get().revoking[token.id]) return;
    set((state) => ({ revoking: { ...state.revoking, [token.id]: true }, revokeError: null }));
    try {
      const revoked = await api.account.revokeToken(token.id);
      set((state) => {
        const entry = state.byUser[token.userId];
        if (entry?.status !== 'loaded') return {};
        // The revoke answer lacks `current`; keep it so the row still says which token was this browser's.
        const tokens = entry.tokens.map((t) => (t.id === revoked.id ? { ...revoked, current: t.current } : t));
        return { byUser: { ...state.byUser, [token.userId]: { status: 'loaded', tokens } } };
      });
      // Revoking the token this browser uses ends the session: the next call answers 401 and the console
      // returns to the sign-in screen with the server's reason.
      if (token.current) await get().load(token.userId);
    } catch (error) {
      set({ revokeError: { userId: token.userId, error } });
    } finally {
      set((state) => ({ revoking: { ...state.revoking, [token.id]: false } }));
    }
  },

  reset() {
    set({ byUser: {}, revoking: {}, revokeError: null });
  },
}));
