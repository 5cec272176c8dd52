import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../db/connect.js';
import { createJobs, type Jobs } from '../jobs/boss.js';
import { createLogger } from '../logger.js';
import { openTestDatabase, testEngines } from '../../testing/test-database.js';
import { waitFor } from '../../testing/wait-for.js';
import { AuditAnchors, checkAuditAnchors } from './audit-anchor.js';
import { auditAnchorQueue, postAuditAnchors, registerAuditAnchorJob } from './audit-anchor-job.js';
import { appendAudit } from './audit-log.js';

/** An incoming webhook on 127.0.0.1 that answers `status` and keeps every body it got. */
async function startWebhook(status: number): Promise<{ url: string; bodies: unknown[]; close(): Promise<void> }> {
  const bodies: unknown[] = [];
  const server: Server = createServer((req: IncomingMessage, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      bodies.push(JSON.parse(body));
      res.writeHead(status).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/hooks/secret-token-in-path`, bodies, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

describe.each(testEngines())('the scheduled audit anchor job on %s', (engine) => {
  let database: Database;
  let jobs: Jobs;
  let webhook: Awaited<ReturnType<typeof startWebhook>>;

  beforeAll(async () => {
    database = await openTestDatabase({ engine });
    jobs = await createJobs(database, createLogger('silent'));
    webhook = await startWebhook(200);
  });

  afterAll(async () => {
    await jobs?.stop();
    await database?.close();
    await webhook?.close();
  });

  it('posts every chain head on its schedule, in the anchor file format, and nothing of the entries themselves', async () => {
    for (const projectId of ['trial-a', 'trial-b']) {
      await appendAudit(database.db, { projectId, entityType: 'record', entityId: 'S001', action: 'update', actor: 'crc-wang', newValue: { name: '张三', birth_date: '1961-04-02' } });
    }
    await registerAuditAnchorJob({ jobs, db: database.db, logger: createLogger('silent'), webhookUrl: webhook.url, cron: '0 6 * * *' });
    expect(await jobs.schedules()).toEqual(expect.arrayContaining([expect.objectContaining({ queue: auditAnchorQueue.name, cron: '0 6 * * *', tz: 'UTC' })]));

    // The tick itself is pg-boss's business; what it sends is this job.
    await jobs.send(auditAnchorQueue, {});
    const [message] = await waitFor(async () => (webhook.bodies.length ? webhook.bodies : undefined), 'the anchors to reach the webhook');

    const posted = message as { type: string; text: string; anchors: unknown };
    expect(posted.type).toBe('audit_anchors');
    const anchors = AuditAnchors.parse(posted.anchors);
    expect(anchors.chains.map((chain) => chain.projectId)).toEqual(['trial-a', 'trial-b']);
    expect(posted.text).toContain(`- trial-a: 1 entries, head entry ${anchors.chains[0]!.headId} hash ${anchors.chains[0]!.headHash}`);
    expect(await checkAuditAnchors(database.db, anchors)).toEqual([expect.objectContaining({ ok: true }), expect.objectContaining({ ok: true })]);
    expect(JSON.stringify(message)).not.toMatch(/张三|1961|crc-wang|S001/);
  });

  it('fails the job when the webhook refuses, without putting its URL in the error', async () => {
    const refusing = await startWebhook(500);
    try {
      const attempt = postAuditAnchors(refusing.url, { format: 'clinagent-audit-anchors/1', createdAt: new Date().toISOString(), keyFingerprint: 'f', chains: [] });
      await expect(attempt).rejects.toMatchObject({ code: 'UPSTREAM_FAILED', message: expect.stringContaining('answered HTTP 500') });
      await expect(attempt).rejects.not.toThrow(/secret-token-in-path/);
    } finally {
      await refusing.close();
    }
  });
});
