import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openTestDatabase, testEngines } from '../../testing/test-database.js';
import type { Database } from '../db/connect.js';
import { createTokenAuthenticator } from './authenticate.js';
import { createAdminBootstrap } from './bootstrap-admin.js';
import { createLoginCodeStore } from './login-codes.js';
import { createTokenIssuer } from './token-issuer.js';

describe.each(testEngines())('sign-in links on %s', (engine) => {
  let database: Database;

  beforeAll(async () => {
    database = await openTestDatabase({ engine });
  });

  afterAll(async () => {
    await database?.close();
  });

  it('creates the first admin on an empty database, whose sign-in link works once and gives a working token', async () => {
    const loginCodes = createLoginCodeStore(database.db, { issueToken: createTokenIssuer() });
    const bootstrap = createAdminBootstrap(database.db, { loginCodes });

    const first = await bootstrap.bootstrapAdmin();
    expect(first).toMatchObject({ created: true, loginCode: expect.stringMatching(/^login_/) });
    const { user, token } = await loginCodes.exchangeLoginCode(first.loginCode!);
    expect(user).toMatchObject({ name: 'admin', role: 'admin' });
    expect(await createTokenAuthenticator(database.db).findByToken(token)).toEqual(user);

    await expect(loginCodes.exchangeLoginCode(first.loginCode!)).rejects.toMatchObject({ code: 'UNAUTHENTICATED' });
    expect(await bootstrap.bootstrapAdmin()).toEqual({ created: false });
  });
});
