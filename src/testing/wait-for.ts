/**
 * Polls `probe` until it returns a truthy value, or fails naming `what` it waited for. Tests wait on state
 * (a job settled, a run completed), never on fixed sleeps.
 */
export async function waitFor<T>(probe: () => Promise<T | undefined | false | null>, what: string, timeoutMs = 30_000, intervalMs = 100): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
