import type { Fault } from './faults.js';
import type { FaultServer } from './fault-server.js';
import { personMessageProblems, snippet } from './person-message.js';
import type { FaultTarget, TargetSession } from './target.js';

export interface CellResult {
  target: string;
  fault: string;
  engine: string;
  ok: boolean;
  /** One line per failed check; empty when the cell is green. */
  problems: string[];
  modelCalls: number;
  ms: number;
  /** The start of what the person got, for the report. */
  shown: string;
}

/**
 * One cell: prepare with the healthy model, run the turn with the fault answering every model call, then send the
 * next message with the healthy model. Every check of the suite is here, so no target can skip one.
 */
export async function runCell(server: FaultServer, target: FaultTarget, session: TargetSession, fault: Fault): Promise<CellResult> {
  const began = Date.now();
  const problems: string[] = [];
  const healthy = () => server.answerWith((request) => session.healthy(request));
  let shown = '';
  let before = server.model.requests.length;
  let after: number | undefined;
  try {
    healthy();
    await session.prepare?.();
    before = server.model.requests.length;
    server.answerWith((request) => fault.step(request, session));
    const turnStarted = Date.now();
    const outcome = await withLimit(session.turn(fault), target.turnLimitMs + 5_000, `the turn did not end within ${target.turnLimitMs + 5_000} ms`);
    const turnMs = Date.now() - turnStarted;
    after = server.model.requests.length;
    const modelCalls = countCalls(server, session, before, after);
    healthy();
    shown = typeof outcome.message === 'string' ? snippet(outcome.message) : String(outcome.message);
    if (outcome.status >= 500) problems.push(`HTTP ${outcome.status}`);
    if (turnMs > target.turnLimitMs) problems.push(`the turn took ${turnMs} ms (limit ${target.turnLimitMs})`);
    problems.push(...personMessageProblems(outcome.message));
    // What streamed in front of the person counts as much as the final message (it may be nothing: a tool round).
    if (outcome.watched) problems.push(...personMessageProblems(outcome.watched).map((problem) => `streamed text: ${problem.replace(/^the message /, '')}`));
    if (modelCalls > target.maxModelCalls) problems.push(`${modelCalls} model calls (at most ${target.maxModelCalls})`);
    problems.push(...(await session.invariant(fault, outcome)));
    const next = await withLimit(session.next(), target.turnLimitMs + 5_000, 'the next message did not end');
    if (next.status === 409) problems.push('stuck: the next message was refused (409)');
    else if (next.status >= 500) problems.push(`the next message got HTTP ${next.status}`);
    else if (next.status >= 400) problems.push(`the next message got HTTP ${next.status}: ${snippet(String(typeof next.message === 'string' ? next.message : JSON.stringify(next.message)))}`);
  } catch (error) {
    problems.push(`the cell threw: ${snippet(error instanceof Error ? error.message : String(error), 200)}`);
  } finally {
    healthy();
  }
  // A turn that never ended still tells how many calls it made meanwhile.
  const modelCalls = countCalls(server, session, before, after ?? server.model.requests.length);
  return { target: target.id, fault: fault.id, engine: server.engine, ok: problems.length === 0, problems, modelCalls, ms: Date.now() - began, shown };
}

function countCalls(server: FaultServer, session: TargetSession, from: number, to: number): number {
  const calls = server.model.requests.slice(from, to);
  return session.owns ? calls.filter((request) => session.owns!(request)).length : calls.length;
}

async function withLimit<T>(work: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([work, new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(message)), ms)))]);
  } finally {
    clearTimeout(timer);
  }
}
