import { createGuardedFetch } from '../../../core/net/guarded-fetch.js';

/**
 * The fetch the Dify client uses: the resolved address is checked at connect time (core/net/guarded-fetch.ts), so
 * DNS rebinding cannot turn a public Dify host into 169.254.169.254. Hosts named in DIFY_ALLOWED_HOSTS connect
 * wherever they resolve.
 */
export function createDifyFetch(allowedHosts: ReadonlyArray<string>): typeof fetch {
  return createGuardedFetch({ allowedHosts, what: 'a Dify host', setting: 'DIFY_ALLOWED_HOSTS', code: 'EDIFYHOSTREFUSED' });
}
