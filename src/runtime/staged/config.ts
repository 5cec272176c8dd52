import { z } from 'zod';

/**
 * A staged agent's configuration (seed 001 section 2.1): what an admin may change without a release. Stored in
 * the database with versions (config-store.ts), seeded from a versioned YAML file shipped beside the agent.
 * Names follow the seed (camelCase), so its documents read against ours.
 */

const id = z.string().regex(/^[a-z][a-z0-9_]{0,63}$/, 'must be lower case letters, digits and _, starting with a letter (at most 64)');
/** A JSON Logic expression (transition conditions, card triggers), checked when it is compiled. */
const jsonLogic = z.record(z.string(), z.unknown());

export const ReflexionRuleLogic = z.strictObject({
  /** The field the rule reads, a dotted path inside the stage's context field (`question`, `primary.name`). */
  field: z.string().min(1).max(200),
  condition: z.enum(['required', 'min_length', 'max_length', 'pattern', 'custom']),
  /** The number for min_length / max_length, the regular expression for pattern. */
  value: z.union([z.number(), z.string()]).optional(),
  /** A validator registered by name in code (custom). */
  customValidator: z.string().max(100).optional(),
});
export type ReflexionRuleLogic = z.infer<typeof ReflexionRuleLogic>;

export const ReflexionRuleConfig = z.strictObject({
  ruleId: id,
  ruleName: z.string().min(1).max(200),
  /** The stage it checks; every stage when absent. */
  triggerStageId: id.optional(),
  /** on_extract: after data is extracted from a message; on_complete: when the stage is to complete (also before an automatic transition). */
  triggerTiming: z.enum(['on_extract', 'on_complete']),
  ruleType: z.enum(['rule_based', 'prompt_based', 'hybrid']),
  /** prompt_based and hybrid: what the model is asked; {{stageData}} and {{stageName}} are filled in. */
  promptTemplate: z.string().max(10_000).optional(),
  ruleLogic: ReflexionRuleLogic.optional(),
  severity: z.enum(['error', 'warning', 'info']),
  /** block keeps the stage; warn tells the user; log only records it in the trace. */
  failureAction: z.enum(['block', 'warn', 'log']),
  priority: z.number().int().min(0).max(1000).default(100),
  /** What the user is told when the rule fails ("The primary endpoint needs a name"). */
  message: z.string().min(1).max(1000),
});
export type ReflexionRuleConfig = z.infer<typeof ReflexionRuleConfig>;

export const ActionCardConfig = z.strictObject({
  cardId: id,
  title: z.string().min(1).max(200),
  description: z.string().max(1000).optional(),
  iconType: z.string().max(50).optional(),
  triggerType: z.enum(['stage_enter', 'condition', 'manual']),
  /** condition: a JSON Logic expression over the context (`{"var": "sampleSize.total"}`). */
  triggerCondition: jsonLogic.optional(),
  actionType: z.enum(['deep_link', 'api_call', 'modal']),
  /**
   * deep_link: `{url, params}` where each param names a context path whose value fills it (`design:
   * sampleSize.inputs.design`); api_call: `{method, url}`; modal: `{component}`.
   */
  actionPayload: z.record(z.string(), z.unknown()),
  onCompleteAction: z.string().max(100).optional(),
  /** Result key -> context path (`total: sampleSize.total`): how the action callback's result is recorded. */
  resultMapping: z.record(z.string().max(100), z.string().max(200)).optional(),
  /**
   * The tool that computes the card's result (`calculate_sample_size`). Then only that tool fills what the card
   * maps: a callback's result is computed again from its `inputs` and refused when the two differ, a successful
   * call of the tool in a stage turn is recorded through the same resultMapping, and the model's own data block
   * never fills those values.
   */
  resultTool: z.string().min(1).max(100).optional(),
  /**
   * How a reply states the tool's result in words (a RE2 regular expression, e.g. "60 per group"): a number in a
   * match that the tool did not compute is marked "not calculated" in the reply and in the turn's issues.
   */
  resultClaimPattern: z.string().min(1).max(200).optional(),
});
export type ActionCardConfig = z.infer<typeof ActionCardConfig>;

export const StageConfig = z.strictObject({
  stageId: id,
  stageName: z.string().min(1).max(200),
  /** Where the stage's data lives in the context (`scientificQuestion`). */
  contextField: z.string().regex(/^[a-zA-Z][a-zA-Z0-9]{0,63}$/, 'must be a camelCase name such as scientificQuestion'),
  instruction: z.string().min(1).max(20_000),
  /** JSON Schema of what the stage extracts; its `example` is shown to the model inside <extracted_data>. */
  extractionSchema: z.record(z.string(), z.unknown()),
  completionCriteria: z.string().max(5000).optional(),
  nextStageId: id.nullable(),
  transitionMode: z.enum(['user_confirm', 'auto', 'condition']),
  transitionCondition: jsonLogic.optional(),
  availableToolIds: z.array(z.string().min(1).max(100)).default([]),
  actionCards: z.array(ActionCardConfig).default([]),
});
export type StageConfig = z.infer<typeof StageConfig>;

export const StagedAgentConfig = z.strictObject({
  agentId: id,
  agentName: z.string().min(1).max(200),
  /** The version of the shipped YAML this came from; an admin's edit keeps it and gets a new stored version. */
  version: z.number().int().min(1),
  baseSystemPrompt: z.string().min(1).max(20_000),
  toneOfVoice: z.string().max(2000).optional(),
  memoryStrategy: z.enum(['full', 'sliding_window']).default('sliding_window'),
  /** sliding_window: user/assistant pairs kept in the prompt. */
  maxHistoryTurns: z.number().int().min(1).max(100).default(10),
  defaultModel: z.string().max(200).optional(),
  temperature: z.number().min(0).max(2).default(0.3),
  maxTokens: z.number().int().min(64).max(32_000).default(2000),
  stages: z.array(StageConfig).min(1),
  reflexionRules: z.array(ReflexionRuleConfig).default([]),
});
export type StagedAgentConfig = z.infer<typeof StagedAgentConfig>;
export type StagedAgentConfigInput = z.input<typeof StagedAgentConfig>;
