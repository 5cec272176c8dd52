import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadScenario } from '../scenarios/load.js';

const BASE = 'id: chat\nname: Chat\nsystem_prompt: Answer the question.\n';
const dir = mkdtempSync(path.join(tmpdir(), 'clinagent-history-'));

function scenarioWith(name: string, historyYaml: string) {
  const file = path.join(dir, `${name}.yaml`);
  writeFileSync(file, BASE + historyYaml);
  return () => loadScenario(file);
}

afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The `history:` block of a scenario file decides what the model sees again of a conversation it continues. */
describe('scenario history block', () => {
  it('defaults to the full conversation capped at 8000 tokens', () => {
    expect(scenarioWith('default', '')().history).toEqual({ strategy: 'full', maxTokens: 8000 });
  });

  it('maps sliding_window and summary with their limits', () => {
    expect(scenarioWith('window', 'history: { strategy: sliding_window, max_turns: 10, max_tokens: 2000 }\n')().history).toEqual({ strategy: 'sliding_window', maxTurns: 10, maxTokens: 2000 });
    expect(scenarioWith('summary', 'history: { strategy: summary, keep_turns: 6 }\n')().history).toEqual({ strategy: 'summary', keepTurns: 6, maxTokens: 8000 });
  });

  it('refuses limits that do not belong to the strategy, a summary without keep_turns and unknown keys, naming each field', () => {
    const bad = [
      ['no-keep', 'history: { strategy: summary }\n', 'history.keep_turns: required when strategy is summary'],
      ['keep-on-full', 'history: { keep_turns: 3 }\n', 'history.keep_turns: applies only to strategy summary'],
      ['turns-on-summary', 'history: { strategy: summary, keep_turns: 3, max_turns: 5 }\n', 'history.max_turns: applies only to strategy sliding_window'],
      ['unknown', 'history: { strategy: recent }\n', 'history.strategy'],
      ['extra', 'history: { strategy: full, window: 3 }\n', 'history'],
      ['zero', 'history: { strategy: sliding_window, max_turns: 0 }\n', 'history.max_turns'],
    ] as const;
    for (const [name, yaml, problem] of bad) {
      expect(scenarioWith(name, yaml), name).toThrow(expect.objectContaining({ code: 'SCENARIO_INVALID', message: expect.stringContaining(problem) }));
    }
  });
});
