import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openTestDatabase, testEngines } from '../../testing/test-database.js';
import type { Database } from '../db/connect.js';
import { createTokenStore } from './api-tokens.js';
import { createTokenAuthenticator } from './authenticate.js';
import { createTokenIssuer } from './token-issuer.js';
import { issueLoginCodeIn } from './login-codes.js';
import { createUserStore } from './users.js';

const DAY_MS = 24 * 60 * 60 * 1000;
const admin = { id: '00000000-0000-4000-8000-000000000001', name: 'operator', role: 'admin' as const };

/** Accounts, tokens and the token check are separate stores over one database, each built from its own dependencies. */
describe.each(testEngines())('user accounts and tokens on %s', (engine) => {
  let database: Database;

  beforeAll(async () => {
    database = await openTestDatabase({ engine });
  });

  afterAll(async () => {
    await database?.close();
  });

  it("gives a new user a first token that the authenticator accepts and that lives the issuer's configured days", async () => {
    const issueToken = createTokenIssuer({ tokenTtlDays: 2 });
    const { user, token } = await createUserStore(database.db, { issueToken, issueLoginCode: issueLoginCodeIn }).create({ name: 'nurse-wang', role: 'coordinator' });

    expect(await createTokenAuthenticator(database.db).authenticate(token)).toMatchObject({ ok: true, user: { id: user.id, name: 'nurse-wang', role: 'coordinator' } });
    const [info] = await createTokenStore(database.db, { issueToken }).listTokens(user.id, admin);
    expect(info).toMatchObject({ userId: user.id, label: 'created with user', revokedAt: null });
    expect(Math.abs(Date.parse(info!.expiresAt!) - (Date.now() + 2 * DAY_MS))).toBeLessThan(60_000);
  });

  it('refuses the tokens of a deactivated user with the reason, and accepts them again after reactivation', async () => {
    const issueToken = createTokenIssuer();
    const accounts = createUserStore(database.db, { issueToken, issueLoginCode: issueLoginCodeIn });
    const authenticator = createTokenAuthenticator(database.db);
    const { user } = await accounts.create({ name: 'monitor-zhao', role: 'viewer' });
    const { token } = await createTokenStore(database.db, { issueToken }).issueToken(user.id, { label: 'laptop' });

    await accounts.deactivate(user.id, admin);
    expect(await authenticator.authenticate(token)).toMatchObject({ ok: false, reason: 'deactivated' });
    expect(await authenticator.findByToken(token)).toBeUndefined();

    await accounts.reactivate(user.id, admin);
    expect(await authenticator.findByToken(token)).toEqual({ id: user.id, name: 'monitor-zhao', role: 'viewer' });
  });
});
