import { PLATFORM_AUDIT_SCOPE } from '../../core/audit/audit-log.js';
import { verifyAuditChain } from '../../core/audit/verify-audit-chain.js';
import { queryRows, sql, type Db } from '../../core/db/connect.js';
import type { ChaosClient } from './chaos-client.js';
import { CHAOS_PROJECT } from './qc-batch-data.js';
import type { Ledger } from './workload.js';

/** Ids in a failure message: the first few, and how many more. */
const ids = (list: readonly string[], shown = 8) => `${list.slice(0, shown).join(', ')}${list.length > shown ? ` and ${list.length - shown} more` : ''}`;

/**
 * What the chaos test promises, read from the database once every process has stopped: each check that fails says
 * which and names the runs, records or entries. An empty list is a pass.
 */
export async function checkDatabase(db: Db, ledger: Ledger, options: { agentRuns: boolean }): Promise<string[]> {
  const failures: string[] = [];
  const fail = (check: string, list: string[]) => list.length && failures.push(`${check}: ${list.length} (${ids(list)})`);

  // Every record a client was told was imported is there, with the values it sent.
  const stored = await queryRows<{ record_id: string; age: string | number | null }>(db, sql`select record_id, data->>'age' as age from trial_records where project_id = ${CHAOS_PROJECT}`);
  const ageOf = new Map(stored.map((r) => [r.record_id, String(r.age)]));
  fail('imported records (acknowledged 201) missing or changed', ledger.imports.flatMap((i) => i.records.filter((r) => ageOf.get(r.recordId) !== String(r.age)).map((r) => r.recordId)));

  // One task run per record of each acknowledged QC run, each ended (done, or waiting for its review), none failed.
  const runs = await queryRows<{ id: string; qc_run_id: string; record_id: string; status: string; steps: number; nodes: number }>(db, sql`
    select id, qc_run_id, record_id, status, jsonb_array_length(steps) as steps,
      (select count(distinct s->>'node') from jsonb_array_elements(steps) s)::int as nodes
    from task_runs where project_id = ${CHAOS_PROJECT}`);
  for (const qc of ledger.qcRuns) {
    const of = runs.filter((r) => r.qc_run_id === qc.id);
    const counts = new Map<string, number>();
    for (const r of of) counts.set(r.record_id, (counts.get(r.record_id) ?? 0) + 1);
    fail(`QC run ${qc.id} (batch ${qc.batch}): records without exactly one task run`, qc.recordIds.filter((id) => counts.get(id) !== 1));
    fail(`QC run ${qc.id} (batch ${qc.batch}): task runs of records not in the batch`, of.filter((r) => !qc.recordIds.includes(r.record_id)).map((r) => r.id));
  }
  fail('task runs not ended (RUNNING, PENDING or FAILED)', runs.filter((r) => !['COMPLETED', 'SUSPENDED'].includes(r.status)).map((r) => `${r.id}:${r.status}`));
  fail('task runs with a node saved twice', runs.filter((r) => r.steps !== r.nodes).map((r) => r.id));

  // One query per finding, each opened once in the audit trail.
  const queries = await queryRows<{ id: string; record_id: string; rule_id: string }>(db, sql`select id::text, record_id, rule_id from pending_actions where project_id = ${CHAOS_PROJECT}`);
  const found = new Map<string, number>();
  for (const q of queries) found.set(`${q.record_id}:${q.rule_id}`, (found.get(`${q.record_id}:${q.rule_id}`) ?? 0) + 1);
  const expected = ledger.qcRuns.flatMap((qc) => ledger.imports.find((i) => i.batch === qc.batch)!.records.flatMap((r) => r.violations.map((rule) => `${r.recordId}:${rule}`)));
  fail('findings without a query', [...new Set(expected)].filter((key) => !found.has(key)));
  fail('findings with more than one query', [...found].filter(([, n]) => n > 1).map(([key, n]) => `${key} x${n}`));
  const opened = await queryRows<{ entity_id: string; n: number }>(db, sql`select entity_id, count(*)::int as n from audit_log where project_id = ${CHAOS_PROJECT} and entity_type = 'query' and action = 'opened' group by entity_id`);
  const openedOf = new Map(opened.map((o) => [o.entity_id, o.n]));
  fail('queries without exactly one "opened" audit entry', queries.filter((q) => openedOf.get(q.id) !== 1).map((q) => `${q.id}:${openedOf.get(q.id) ?? 0}`));

  // No durable agent run left mid-way; every acknowledged answer is in its run exactly once, and the run finished.
  const agentRuns = await queryRows<{ id: string; kind: string; status: string; messages: string | null }>(db, sql`select id::text, kind, status, (state->'messages')::text as messages from agent_runs`);
  fail('agent runs left RUNNING or PENDING', agentRuns.filter((r) => r.status === 'RUNNING' || r.status === 'PENDING').map((r) => `${r.id}:${r.kind}:${r.status}`));
  if (options.agentRuns) {
    const byId = new Map(agentRuns.map((r) => [r.id, r]));
    fail('agent runs a client started (202) that are missing', ledger.agentRuns.filter((id) => !byId.has(id)));
    fail('acknowledged answers not in their run exactly once, or the run not completed', ledger.answers.filter(({ runId, answer }) => {
      const run = byId.get(runId);
      const messages = run?.messages ? (JSON.parse(run.messages) as Array<{ content?: unknown }>) : [];
      return run?.status !== 'COMPLETED' || messages.filter((m) => m.content === answer).length !== 1;
    }).map((a) => a.runId));
  }

  // The audit chains verify: the trial's and the platform's (agent runs without a project).
  for (const scope of [CHAOS_PROJECT, PLATFORM_AUDIT_SCOPE]) {
    const chain = await verifyAuditChain(db, scope);
    if (!chain.ok) failures.push(`audit chain of ${scope} broken at entry ${chain.firstBadEntryId} (${chain.entries} entries)`);
  }
  return failures;
}

/** Every consult message the server answered 200 is in its consult exactly once, and no message is in it twice (read over HTTP, as the patient would). */
export async function checkConsults(client: ChaosClient, ledger: Ledger): Promise<string[]> {
  const missing: string[] = [];
  for (const sessionId of ledger.consults) {
    const session = await client.retrying('GET', `/api/consult/sessions/${sessionId}`);
    if (session.status !== 200) {
      missing.push(`consult ${sessionId} a client started (201): ${session.status}`);
      continue;
    }
    const said = (session.body.turns as Array<{ role: string; content: string }>).filter((t) => t.role === 'user').map((t) => t.content);
    for (const { text } of ledger.consultMessages.filter((m) => m.sessionId === sessionId)) {
      const times = said.filter((content) => content === text).length;
      if (times !== 1) missing.push(`${sessionId}: "${text}" x${times}`);
    }
    // Every message is resent with its id until answered, so none may be stored twice, acknowledged or not.
    for (const content of new Set(said)) {
      const times = said.filter((other) => other === content).length;
      if (times > 1 && !ledger.consultMessages.some((m) => m.sessionId === sessionId && m.text === content)) missing.push(`${sessionId}: "${content}" x${times} (never acknowledged)`);
    }
  }
  return missing.length ? [`acknowledged consult messages not in their consult exactly once: ${missing.length} (${ids(missing)})`] : [];
}
