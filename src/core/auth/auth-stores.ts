import type { Db } from '../db/connect.js';
import { createTokenStore, type TokenStore } from './api-tokens.js';
import { createTokenAuthenticator, type TokenAuthenticator } from './authenticate.js';
import { createAdminBootstrap, type AdminBootstrap } from './bootstrap-admin.js';
import { createLoginCodeStore, issueLoginCodeIn, type LoginCodeStore } from './login-codes.js';
import { createMembershipStore, type MembershipStore } from './membership.js';
import { createProjectStore, type ProjectStore } from './projects.js';
import { createTokenIssuer } from './token-issuer.js';
import { createUserStore, type UserStore } from './users.js';

/**
 * Every auth store over one database, as the context hands them out (`ctx.users`). Only the composition root,
 * the server's wiring and tests see this whole: an area declares the narrow store it uses (`MembershipCheck`,
 * `ProjectDirectory`, `TokenAuthenticator`, ...) and is given this object, which satisfies each of them.
 */
export type AuthStores = UserStore & TokenStore & TokenAuthenticator & LoginCodeStore & AdminBootstrap & ProjectStore & MembershipStore;

export function createAuthStores(db: Db, options: { tokenTtlDays?: number } = {}): AuthStores {
  const issueToken = createTokenIssuer(options);
  const loginCodes = createLoginCodeStore(db, { issueToken });
  return {
    ...createUserStore(db, { issueToken, issueLoginCode: issueLoginCodeIn }),
    ...createTokenStore(db, { issueToken }),
    ...createTokenAuthenticator(db),
    ...loginCodes,
    ...createAdminBootstrap(db, { loginCodes }),
    ...createProjectStore(db),
    ...createMembershipStore(db),
  };
}
