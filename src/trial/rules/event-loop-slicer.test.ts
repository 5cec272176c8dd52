import { once } from 'node:events';
import { readFile } from 'node:fs';
import net, { type AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { describe, expect, it } from 'vitest';
import { createEventLoopSlicer } from './event-loop-slicer.js';
import { createRuleEngine } from './rule-engine.js';
import { runRulesInSlices, type RunnableRule } from './run-rules.js';

/** Counts turns of the event loop (check phases) until stopped. */
function countLoopTurns(): { turns(): number; stop(): void } {
  let turns = 0;
  let running = true;
  const tick = () => {
    if (!running) return;
    turns++;
    setImmediate(tick);
  };
  setImmediate(tick);
  return { turns: () => turns, stop: () => (running = false) };
}

describe('createEventLoopSlicer', () => {
  it('ends a slice once its time is spent and starts a fresh one at the next turn of the loop, for every waiter at once', async () => {
    const slicer = createEventLoopSlicer(10);
    expect(slicer.isSliceOver()).toBe(false);
    slicer.spend(4);
    expect(slicer.isSliceOver()).toBe(false);
    slicer.spend(6);
    expect(slicer.isSliceOver()).toBe(true);
    const turns = countLoopTurns();
    expect(slicer.nextTurn()).toBe(slicer.nextTurn());
    await slicer.nextTurn();
    turns.stop();
    expect(turns.turns()).toBeGreaterThanOrEqual(1);
    expect(slicer.isSliceOver()).toBe(false);
  });

  it('lets the loop read a request that arrived during a slice before the next slice, even when the slice ran in an I/O callback', async () => {
    const server = net.createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const accepted = once(server, 'connection');
    const client = net.connect((server.address() as AddressInfo).port, '127.0.0.1');
    const [serverSide] = (await accepted) as [net.Socket];
    const order: string[] = [];
    serverSide.on('data', () => order.push('request read'));
    const slicer = createEventLoopSlicer(10);
    try {
      // A QC worker's slice starts in an I/O callback (its database answer); a request arrives meanwhile.
      await new Promise<void>((resolve) =>
        readFile(import.meta.filename, () => {
          client.write('GET /api/health');
          for (const started = performance.now(); performance.now() - started < 30; ); // the slice's synchronous work
          slicer.spend(30);
          void slicer.nextTurn().then(() => {
            order.push('next slice');
            resolve();
          });
        }),
      );
      expect(order).toEqual(['request read', 'next slice']);
    } finally {
      client.destroy();
      server.close();
    }
  });

  it('counts the time of concurrent evaluations together, so four QC workers cannot each take a slice in the same turn', async () => {
    const engine = createRuleEngine();
    const rules: RunnableRule[] = Array.from({ length: 5 }, (_, i) => ({
      rule: { id: `code-${i}`, field: 'code', logic: true, message: 'm' },
      evaluate: engine.compile({ matches: [{ var: 'code' }, `^[a-z]{${i + 1},}$`] }),
    }));
    // A slice of 0 ms: each slice runs one rule, of whichever evaluation comes first.
    const slicer = createEventLoopSlicer(0);
    const turns = countLoopTurns();
    const data = { code: 'abc'.repeat(1_000) };
    await Promise.all(Array.from({ length: 4 }, () => runRulesInSlices(rules, data, slicer)));
    turns.stop();
    // 20 rules, one per turn: with a slicer per evaluation the four would share turns and need only about 5.
    expect(turns.turns()).toBeGreaterThanOrEqual(19);
  });
});
