/** What a store of lists loaded from the server keeps beside them. */
export interface LoadState {
  hasLoaded: boolean;
  isLoading: boolean;
  error: unknown;
}

export const NOT_LOADED: LoadState = { hasLoaded: false, isLoading: false, error: null };

/**
 * Loads a store's lists with `fetch` and sets them. The previous lists stay on screen while refreshing, so a refresh
 * does not flash an empty page; a failure is kept as `error` beside them for the page to show.
 */
export async function loadLists<T extends object>(set: (partial: Partial<T & LoadState>) => void, fetch: () => Promise<T>): Promise<void> {
  set({ isLoading: true, error: null } as Partial<T & LoadState>);
  try {
    set({ ...(await fetch()), hasLoaded: true });
  } catch (error) {
    set({ error } as Partial<T & LoadState>);
  } finally {
    set({ isLoading: false } as Partial<T & LoadState>);
  }
}
