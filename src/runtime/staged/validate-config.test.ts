import { describe, expect, it } from 'vitest';
import { ClinAgentError } from '../../core/errors.js';
import { validateStagedConfig } from './validate-config.js';

const deps = { toolNames: new Set(['calculate_sample_size', 'search_documents']), validators: new Set(['groups_add_up']), source: 'protocol_agent.v1.yaml' };

function stage(stageId: string, contextField: string, nextStageId: string | null, extra: Record<string, unknown> = {}) {
  return {
    stageId,
    stageName: stageId,
    contextField,
    instruction: `Collect the ${stageId}.`,
    extractionSchema: { type: 'object', properties: { note: { type: 'string' } }, example: { note: '...' } },
    nextStageId,
    transitionMode: 'user_confirm',
    ...extra,
  };
}

function config(overrides: Record<string, unknown> = {}) {
  return {
    agentId: 'protocol_agent',
    agentName: 'Protocol Agent',
    version: 1,
    baseSystemPrompt: 'You help design trials.',
    stages: [
      stage('scientific_question', 'scientificQuestion', 'pico'),
      stage('pico', 'pico', 'sample_size'),
      stage('sample_size', 'sampleSize', null, {
        transitionMode: 'condition',
        transitionCondition: { '>=': [{ var: 'sampleSize.total' }, 1] },
        availableToolIds: ['calculate_sample_size'],
        actionCards: [
          { cardId: 'calculator', title: 'Calculator', triggerType: 'stage_enter', actionType: 'deep_link', actionPayload: { url: '/protocol/calculator', params: { alpha: 'sampleSize.alpha' } } },
          { cardId: 'big_trial', title: 'Large trial', triggerType: 'condition', triggerCondition: { some: [{ var: 'sampleSize.perGroup' }, { '>': [{ var: '' }, 500] }] }, actionType: 'modal', actionPayload: { component: 'Info' } },
        ],
      }),
    ],
    reflexionRules: [
      { ruleId: 'population_required', ruleName: 'Population', triggerStageId: 'pico', triggerTiming: 'on_complete', ruleType: 'rule_based', ruleLogic: { field: 'population', condition: 'required' }, severity: 'error', failureAction: 'block', message: 'Population missing' },
      { ruleId: 'question_format', ruleName: 'Question', triggerTiming: 'on_extract', ruleType: 'hybrid', ruleLogic: { field: 'question', condition: 'pattern', value: '\\?$' }, severity: 'warning', failureAction: 'warn', message: 'End with a question mark' },
      { ruleId: 'groups', ruleName: 'Groups', triggerStageId: 'sample_size', triggerTiming: 'on_complete', ruleType: 'rule_based', ruleLogic: { field: 'total', condition: 'custom', customValidator: 'groups_add_up' }, severity: 'error', failureAction: 'block', message: 'Groups do not add up' },
      { ruleId: 'pico_quality', ruleName: 'PICO quality', triggerStageId: 'pico', triggerTiming: 'on_complete', ruleType: 'prompt_based', severity: 'info', failureAction: 'log', message: 'PICO could be sharper' },
    ],
    ...overrides,
  };
}

function problemsOf(raw: unknown): string[] {
  try {
    validateStagedConfig(raw, deps);
  } catch (error) {
    if (!ClinAgentError.isInstance(error)) throw error;
    expect(error.code).toBe('AGENT_INVALID');
    expect(error.status).toBe(422);
    const problems = error.details.problems as string[];
    for (const line of problems) expect(error.message).toContain(line);
    return problems;
  }
  throw new Error('expected the configuration to be refused');
}

describe('validateStagedConfig', () => {
  it('returns the parsed configuration, defaults filled, when everything checks out', () => {
    const parsed = validateStagedConfig(config(), deps);
    expect(parsed.stages.map((s) => s.stageId)).toEqual(['scientific_question', 'pico', 'sample_size']);
    expect(parsed.stages[0]!.availableToolIds).toEqual([]);
    expect(parsed.reflexionRules[0]!.priority).toBe(100);
    expect(parsed.memoryStrategy).toBe('sliding_window');
  });

  it('names the stage by its id and the field, with the values allowed', () => {
    const raw = config();
    (raw.stages[2] as Record<string, unknown>).transitionMode = 'manual';
    expect(problemsOf(raw)).toEqual(['protocol_agent.v1.yaml: stages.sample_size.transitionMode: must be one of user_confirm, auto, condition']);
  });

  it('names rules and cards by their ids, unknown keys and missing fields included', () => {
    const raw = config({ colour: 'blue' });
    const rules = raw.reflexionRules as Record<string, unknown>[];
    delete rules[0]!.message;
    rules[1]!.severity = 'fatal';
    const card = ((raw.stages[2] as Record<string, unknown>).actionCards as Record<string, unknown>[])[0]!;
    card.onClick = 'x';
    card.actionPayload = 'not an object';
    expect(problemsOf(raw).sort()).toEqual(
      [
        'protocol_agent.v1.yaml: (config): "colour" is not a setting here; remove it or check the spelling',
        'protocol_agent.v1.yaml: reflexionRules.population_required.message: is required (string)',
        'protocol_agent.v1.yaml: reflexionRules.question_format.severity: must be one of error, warning, info',
        'protocol_agent.v1.yaml: stages.sample_size.actionCards.calculator: "onClick" is not a setting here; remove it or check the spelling',
        'protocol_agent.v1.yaml: stages.sample_size.actionCards.calculator.actionPayload: Invalid input: expected record, received string',
        'protocol_agent.v1.yaml: stages.sample_size.actionCards.calculator.actionPayload.url: a deep_link card needs a url inside the console, starting with a single "/" (e.g. "/tools/sample-size"); got nothing',
      ].sort(),
    );
  });

  it('reports a next stage that does not exist, listing the stages', () => {
    const raw = config();
    (raw.stages[1] as Record<string, unknown>).nextStageId = 'design';
    expect(problemsOf(raw)).toEqual([
      'protocol_agent.v1.yaml: stages.pico.nextStageId: "design" is not a stage id (stages: scientific_question, pico, sample_size); use one of them, or null for the last stage',
    ]);
  });

  it('reports every cross-check problem at once', () => {
    const raw = config();
    const [first, second, third] = raw.stages as Record<string, unknown>[];
    second!.stageId = 'scientific_question';
    second!.contextField = 'scientificQuestion';
    first!.transitionMode = 'condition';
    third!.transitionCondition = { '>=': [{ var: 'sampleSize.total' }, 1], '<': [1, 2] };
    third!.availableToolIds = ['calculate_sample_size', 'send_email'];
    const cards = third!.actionCards as Record<string, unknown>[];
    cards[0]!.actionPayload = { url: '//evil.example/phish' };
    cards[1]!.triggerCondition = { frobnicate: [{ var: 'sampleSize.total' }] };
    cards.push({ cardId: 'calculator', title: 'Again', triggerType: 'condition', actionType: 'deep_link', actionPayload: { url: 'protocol/x' } });
    const rules = raw.reflexionRules as Record<string, unknown>[];
    rules[0]!.triggerStageId = 'design';
    delete rules[0]!.ruleLogic;
    rules[1]!.ruleLogic = { field: 'question', condition: 'pattern', value: '(?=x)y' };
    rules[2]!.ruleLogic = { field: 'total', condition: 'custom', customValidator: 'magic' };
    rules[3]!.ruleId = 'groups';
    rules.push({ ruleId: 'len', ruleName: 'Length', triggerTiming: 'on_extract', ruleType: 'rule_based', ruleLogic: { field: 'question', condition: 'min_length', value: 2.5 }, severity: 'info', failureAction: 'log', message: 'Too short' });
    const problems = problemsOf(raw).map((line) => line.replace('protocol_agent.v1.yaml: ', ''));
    const expected = [
      /^stages.scientific_question.stageId: "scientific_question" is used by more than one stage/,
      /^stages: contextField "scientificQuestion" is used by more than one stage/,
      /^stages: cardId "calculator" is used by more than one action card/,
      /^reflexionRules.groups.ruleId: "groups" is used by more than one rule/,
      /^stages.scientific_question.transitionCondition: a condition transition needs transitionCondition/,
      /^stages.sample_size.transitionCondition: an operation has exactly one operator key, found >=, </,
      /^stages.sample_size.availableToolIds: "send_email" is not a registered tool \(calculate_sample_size, search_documents\)/,
      /^stages.sample_size.actionCards.calculator.actionPayload.url: a deep_link card needs a url inside the console.*got "\/\/evil.example\/phish"/,
      /^stages.sample_size.actionCards.big_trial.triggerCondition: unknown JSON Logic operator "frobnicate"/,
      /^stages.sample_size.actionCards.calculator.triggerCondition: a condition card needs triggerCondition/,
      /^stages.sample_size.actionCards.calculator.actionPayload.url: .*got "protocol\/x"/,
      /^reflexionRules.population_required.triggerStageId: "design" is not a stage id/,
      /^reflexionRules.population_required.ruleLogic: rule_based rules need ruleLogic/,
      /^reflexionRules.question_format.ruleLogic.value: the pattern "\(\?=x\)y" cannot be compiled by the linear-time matcher/,
      /^reflexionRules.groups.ruleLogic.customValidator: "magic" is not a registered validator \(registered: groups_add_up\)/,
      /^reflexionRules.len.ruleLogic.value: min_length needs a whole number/,
      // Renaming the pico stage leaves what pointed at it dangling, each reported too.
      /^stages.scientific_question.nextStageId: "pico" is not a stage id \(stages: scientific_question, sample_size\)/,
      /^reflexionRules.groups.triggerStageId: "pico" is not a stage id/,
    ];
    for (const pattern of expected) expect(problems, String(pattern)).toContainEqual(expect.stringMatching(pattern));
    expect(problems, problems.join('\n')).toHaveLength(expected.length);
  });

  it('checks that condition variables start with a context field, outside iterators only', () => {
    const raw = config();
    (raw.stages[2] as Record<string, unknown>).transitionCondition = { and: [{ var: 'sampleSize.total' }, { var: 'samplesize.power' }] };
    expect(problemsOf(raw)).toEqual([
      'protocol_agent.v1.yaml: stages.sample_size.transitionCondition: variable "samplesize.power" does not start with a context field (scientificQuestion, pico, sampleSize)',
    ]);
  });

  it('requires an extraction schema that declares its fields', () => {
    const raw = config();
    (raw.stages[0] as Record<string, unknown>).extractionSchema = { type: 'object', example: { question: '...' } };
    expect(problemsOf(raw)).toEqual([expect.stringMatching(/^protocol_agent.v1.yaml: stages.scientific_question.extractionSchema.properties: must be an object naming the fields/)]);
  });

  it('checks a card whose result a tool computes: a registered tool, a resultMapping, a pattern the matcher can run', () => {
    const raw = config();
    const cards = (raw.stages[2] as unknown as { actionCards: Array<Record<string, unknown>> }).actionCards;
    cards[0] = { ...cards[0], resultTool: 'calculate_sample_sise', resultClaimPattern: '(\\d+) per group\\1' };
    cards[1] = { ...cards[1], resultClaimPattern: '\\d+ in total' };
    expect(problemsOf(raw)).toEqual([
      expect.stringMatching(/stages.sample_size.actionCards.calculator.resultTool: "calculate_sample_sise" is not a registered tool \(calculate_sample_size, search_documents\)$/),
      expect.stringMatching(/stages.sample_size.actionCards.calculator.resultMapping: a card with a resultTool needs a resultMapping/),
      expect.stringMatching(/stages.sample_size.actionCards.calculator.resultClaimPattern: .*cannot be compiled by the linear-time matcher/),
      expect.stringMatching(/stages.sample_size.actionCards.big_trial.resultClaimPattern: only a card with a resultTool/),
    ]);
  });

  it('refuses what is not an object at all, saying where it came from', () => {
    expect(problemsOf('agentId: x')).toEqual([expect.stringMatching(/^protocol_agent.v1.yaml: \(config\): /)]);
  });
});
