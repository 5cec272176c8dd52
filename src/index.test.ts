import { describe, expect, it } from 'vitest';
import * as clinagent from './index.js';

describe('the package root export', () => {
  it('exposes the Agent Core and the platform pieces as a library', () => {
    for (const name of [
      'runAgent', 'loadScenario', 'loadScenarios', 'parseStructuredOutput', 'createToolRegistry', 'registerBuiltinTools',
      'createLlmGateway', 'createTraceStore', 'createRagStore', 'createLocalEmbedder', 'createOpenAiEmbedder', 'chunkText',
      'extractText', 'countTokens', 'createContext', 'startServer', 'buildServer', 'loadConfig', 'openDatabase', 'runMigrations', 'createJobs',
      'compileRules', 'runWithRetry', 'loadSkill', 'advanceTaskRun', 'resumeTaskRun', 'reviewTaskRun', 'startQcRun', 'registerQcWorkers',
      'transitionQuery', 'createTrialStore', 'importRedcapCsv', 'createRedcapClient', 'ensureDemoTrial', 'createTrialServices',
    ]) {
      expect(typeof (clinagent as Record<string, unknown>)[name], name).toBe('function');
    }
  });

  it('evaluates hard rules through the exported engine', () => {
    const rules = clinagent.compileRules([{ id: 'age', field: 'age', logic: { '>=': [{ var: 'age' }, 18] }, message: 'too young' }]);
    expect(rules.run({ age: 16 })).toEqual([expect.objectContaining({ ruleId: 'age', value: 16 })]);
  });

  it('parses structured output through the exported parser', () => {
    expect(clinagent.parseStructuredOutput('{"answer": "yes", "citations": [], "confidence": "high"}', 'qa_answer')).toMatchObject({ success: true, data: { answer: 'yes' } });
  });
});
