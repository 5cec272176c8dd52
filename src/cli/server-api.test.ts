import { describe, expect, it } from 'vitest';
import { apiToken, consoleReviewUrl, serverUrl } from './server-api.js';

describe('serverUrl', () => {
  it('takes --url first, then CLINAGENT_URL, each without a trailing slash', () => {
    const env = { CLINAGENT_URL: 'http://qc.example.org:8080/', PORT: '9000' };

    expect(serverUrl('http://10.0.0.5:7000/', env)).toBe('http://10.0.0.5:7000');
    expect(serverUrl(undefined, env)).toBe('http://qc.example.org:8080');
    expect(serverUrl('  ', env)).toBe('http://qc.example.org:8080');
  });

  it('otherwise finds the server where the server listens: HOST and PORT as the server reads them', () => {
    expect(serverUrl(undefined, {})).toBe('http://127.0.0.1:3000');
    expect(serverUrl(undefined, { PORT: '8080' })).toBe('http://127.0.0.1:8080');
    expect(serverUrl(undefined, { HOST: 'clinagent.local', PORT: '8443' })).toBe('http://clinagent.local:8443');
    // A server on every interface is reached on loopback; IPv6 addresses are bracketed.
    expect(serverUrl(undefined, { HOST: '0.0.0.0', PORT: '8080' })).toBe('http://127.0.0.1:8080');
    expect(serverUrl(undefined, { HOST: '::', PORT: '8080' })).toBe('http://[::1]:8080');
    expect(serverUrl(undefined, { HOST: '::1', PORT: '8080' })).toBe('http://[::1]:8080');
  });

  it('says to pass --url when the server picks its port at start-up, and reports a bad PORT as the server does', () => {
    expect(() => serverUrl(undefined, { PORT: '0' })).toThrow(expect.objectContaining({ code: 'CONFIG_MISSING', message: expect.stringContaining('Pass --url') }));
    expect(() => serverUrl(undefined, { PORT: 'eighty' })).toThrow(expect.objectContaining({ code: 'CONFIG_INVALID', message: expect.stringContaining('PORT') }));
  });
});

describe('consoleReviewUrl', () => {
  it("is the console's review queue route of the project (web/src/router.ts routes.trialReview)", () => {
    expect(consoleReviewUrl('http://127.0.0.1:3000', 'demo htn/01')).toBe('http://127.0.0.1:3000/#/trial/demo%20htn%2F01/review');
  });
});

describe('apiToken', () => {
  it('takes CLINAGENT_TOKEN, else the admin token, else names the variable to set', () => {
    expect(apiToken('import', { CLINAGENT_TOKEN: ' user-token ', CLINAGENT_ADMIN_TOKEN: 'admin' })).toBe('user-token');
    expect(apiToken('import', { CLINAGENT_ADMIN_TOKEN: 'admin' })).toBe('admin');
    expect(() => apiToken('import', {})).toThrow(/^clinagent import calls the server's API and needs a token: set CLINAGENT_TOKEN/);
  });
});
