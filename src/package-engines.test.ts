import { readFileSync } from 'node:fs';
import path from 'node:path';
import Fastify from 'fastify';
import semver from 'semver';
import { describe, expect, it } from 'vitest';
import { packageRoot } from './core/paths.js';

/**
 * `npm ci` warns EBADENGINE when a locked package declares an `engines.node` range the running Node is
 * outside of. The warning is easy to miss in CI output and the package may really break on the Node that runs it,
 * so the lock file is checked here instead: every package must accept the oldest Node we support (package.json
 * `engines`, 22.15) and the current LTS line, 24. (On a machine whose own Node is older, `npm ci` itself still
 * warns: npm runs on that Node, while everything it installs runs on the Node 24 of the `node` package.)
 */
const root = packageRoot();
const manifest = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { engines: { node: string } };
const lock = JSON.parse(readFileSync(path.join(root, 'package-lock.json'), 'utf8')) as { packages: Record<string, { version?: string; engines?: { node?: string } | string[] }> };

const oldestSupported = semver.minVersion(manifest.engines.node)!.version;

function packagesRefusing(nodeVersion: string): string[] {
  return Object.entries(lock.packages).flatMap(([location, entry]) => {
    // Very old packages wrote engines as an array of strings; npm ignores those, and so does this check.
    const range = Array.isArray(entry.engines) ? undefined : entry.engines?.node;
    if (!range || semver.satisfies(nodeVersion, range, { includePrerelease: true })) return [];
    return [`${location.replace(/^.*node_modules\//, '') || '(root)'}@${entry.version ?? '?'} needs node ${range} (${location})`];
  });
}

describe('package-lock.json', () => {
  it(`installs without EBADENGINE on the oldest supported Node (${oldestSupported}) and on Node 24`, () => {
    expect(oldestSupported).toBe('22.15.0');
    expect(packagesRefusing(oldestSupported)).toEqual([]);
    expect(packagesRefusing('24.0.0')).toEqual([]);
  });

  it('finds a package whose engines exclude the Node version (the check itself works)', () => {
    // The OpenTelemetry SDK 3 declares node >=22.15: Node 20 is refused by it, and so by this check.
    expect(packagesRefusing('20.19.0')).toEqual(expect.arrayContaining([expect.stringMatching(/^@opentelemetry\/sdk-trace@3\.\S+ needs node >=22\.15/)]));
  });
});

describe('fastify inject (light-my-request)', () => {
  it('sends request cookies and parses the Set-Cookie of the response', async () => {
    const app = Fastify();
    app.get('/echo', async (request, reply) => reply.header('set-cookie', 'session=abc; Path=/; HttpOnly').send({ cookie: request.headers.cookie ?? '' }));
    try {
      const response = await app.inject({ method: 'GET', url: '/echo', cookies: { lang: 'zh-CN', theme: 'dark' } });

      expect(response.json()).toEqual({ cookie: 'lang=zh-CN; theme=dark' });
      expect(response.cookies).toEqual([expect.objectContaining({ name: 'session', value: 'abc', path: '/', httpOnly: true })]);
    } finally {
      await app.close();
    }
  });
});
