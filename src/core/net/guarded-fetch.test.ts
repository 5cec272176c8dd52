import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGuardedFetch } from './guarded-fetch.js';

const policy = { what: 'a REDCap host', setting: 'REDCAP_ALLOWED_HOSTS', code: 'EREDCAPHOSTREFUSED' };

/**
 * A redirect is followed through the same connection checks: an allowed (or public) host that answers 302 to
 * http://169.254.169.254/ must not get the server to fetch the cloud's credentials, although an IP in a URL is
 * never looked up.
 */
describe('the guarded fetch checks every address it connects to', () => {
  let server: Server;
  let port: number;
  const paths: string[] = [];

  beforeAll(async () => {
    server = createServer((request, response) => {
      paths.push(request.url ?? '');
      if (request.url === '/redirect') response.writeHead(302, { location: `http://127.0.0.1:${port}/credentials` }).end();
      else response.end('credentials');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
  });

  it('refuses a redirect from an allowed host to a non-public IP, naming the address and the setting', async () => {
    paths.length = 0;
    const guarded = createGuardedFetch({ ...policy, allowedHosts: ['localhost'] });
    const error = await guarded(`http://localhost:${port}/redirect`).then(() => undefined, (e: Error) => e);
    expect((error?.cause as Error | undefined)?.message).toBe('127.0.0.1 is a loopback address; a REDCap host must be public unless the server names it in REDCAP_ALLOWED_HOSTS');
    expect(paths).toEqual(['/redirect']);
  });

  it('connects to an IP the administrator allowed by name', async () => {
    const guarded = createGuardedFetch({ ...policy, allowedHosts: ['127.0.0.1'] });
    expect(await (await guarded(`http://127.0.0.1:${port}/credentials`)).text()).toBe('credentials');
  });
});
