import { LogicEngine } from 'json-logic-engine';
import { ClinAgentError } from '../../core/errors.js';
import { StagedAgentConfig } from './config.js';
import { conditionProblem } from './context-logic.js';
import { checkRulePattern } from './reflexion.js';

/**
 * Checks a staged agent's configuration (the shipped YAML, or an admin's edit) before it is stored or run: the
 * shape (config.ts), then what the shape cannot say: ids that must be unique or must exist, conditions that must
 * compile, tools and validators that must be registered. Every problem is reported at once, one line each naming
 * the source, the stage or rule by its id and the field, so one round of fixes is enough.
 */
interface ValidateStagedConfigDeps {
  /** Tools a stage may list in availableToolIds (the tool registry's names). */
  toolNames: ReadonlySet<string>;
  /** Custom validators registered in code, by name. */
  validators: ReadonlySet<string>;
  /** Where the config came from, first on every line (`protocol_agent.v1.yaml`, `admin edit`). */
  source: string;
}

export function validateStagedConfig(raw: unknown, deps: ValidateStagedConfigDeps): StagedAgentConfig {
  const parsed = StagedAgentConfig.safeParse(raw);
  const problems: string[] = [];
  if (!parsed.success) {
    for (const issue of parsed.error.issues) problems.push(`${readablePath(raw, issue.path)}: ${issueMessage(issue, raw)}`);
  }
  // The cross checks read the raw object defensively, so a config with shape errors still gets them all in one go.
  problems.push(...crossCheckProblems(raw, deps));
  if (problems.length || !parsed.success) {
    const lines = [...new Set(problems)].map((line) => `${deps.source}: ${line}`);
    throw new ClinAgentError(
      'AGENT_INVALID',
      `The staged agent configuration from ${deps.source} cannot be used; fix each line and load it again:\n${lines.map((line) => `  ${line}`).join('\n')}`,
      { source: deps.source, problems: lines },
    );
  }
  return parsed.data;
}

type Issue = { code: string; path: ReadonlyArray<PropertyKey>; message: string; values?: readonly unknown[]; keys?: readonly string[]; expected?: string };

/** zod's wording, made to say what to write instead. */
function issueMessage(issue: Issue, raw: unknown): string {
  if (issue.code === 'invalid_value' && issue.values) return `must be one of ${issue.values.map(String).join(', ')}`;
  if (issue.code === 'unrecognized_keys' && issue.keys) {
    return `${issue.keys.map((key) => `"${key}"`).join(', ')} ${issue.keys.length > 1 ? 'are not settings' : 'is not a setting'} here; remove ${issue.keys.length > 1 ? 'them' : 'it'} or check the spelling`;
  }
  // zod does not keep the input on its issues: whether the setting was there at all is read from the raw config.
  if (issue.code === 'invalid_type' && valueAt(raw, issue.path) === undefined) return `is required${issue.expected ? ` (${issue.expected})` : ''}`;
  return issue.message;
}

const READABLE_ID = /^[a-z][a-z0-9_]{0,63}$/;

/** `stages.3.transitionMode` becomes `stages.sample_size.transitionMode` when stage 3 has a readable id. */
function readablePath(raw: unknown, path: ReadonlyArray<PropertyKey>): string {
  if (!path.length) return '(config)';
  const parts: string[] = [];
  let node: unknown = raw;
  for (let i = 0; i < path.length; i++) {
    const key = path[i]!;
    const parent = path[i - 1];
    const child = Array.isArray(node) && typeof key === 'number' ? node[key] : isObject(node) ? node[String(key)] : undefined;
    const idKey = parent === 'stages' ? 'stageId' : parent === 'reflexionRules' ? 'ruleId' : parent === 'actionCards' ? 'cardId' : undefined;
    const id = idKey && isObject(child) ? child[idKey] : undefined;
    parts.push(typeof key === 'number' && typeof id === 'string' && READABLE_ID.test(id) ? id : String(key));
    node = child;
  }
  return parts.join('.');
}

function valueAt(raw: unknown, path: ReadonlyArray<PropertyKey>): unknown {
  let node = raw;
  for (const key of path) node = Array.isArray(node) && typeof key === 'number' ? node[key] : isObject(node) ? node[String(key)] : undefined;
  return node;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function list(value: unknown): Record<string, unknown>[] {
  return Array.isArray(value) ? value.filter(isObject) : [];
}

function stringOf(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

function crossCheckProblems(raw: unknown, deps: ValidateStagedConfigDeps): string[] {
  if (!isObject(raw)) return [];
  const problems: string[] = [];
  const stages = list(raw.stages);
  const rules = list(raw.reflexionRules);
  const stageIds = stages.map((stage) => stringOf(stage.stageId)).filter((id): id is string => id !== undefined);
  const stageIdSet = new Set(stageIds);
  const contextFields = new Set(stages.map((stage) => stringOf(stage.contextField)).filter((field): field is string => field !== undefined));
  const stageName = (stage: Record<string, unknown>, index: number) => `stages.${stringOf(stage.stageId) ?? index}`;

  problems.push(...duplicates(stageIds, (id) => `stages.${id}.stageId: "${id}" is used by more than one stage; stage ids must be unique`));
  problems.push(
    ...duplicates(
      stages.map((stage) => stringOf(stage.contextField)).filter((field): field is string => field !== undefined),
      (field) => `stages: contextField "${field}" is used by more than one stage; each stage fills its own context field`,
    ),
  );
  const cards = stages.flatMap((stage, index) => list(stage.actionCards).map((card) => ({ card, where: stageName(stage, index) })));
  problems.push(...duplicates(cards.map(({ card }) => stringOf(card.cardId)).filter((id): id is string => id !== undefined), (id) => `stages: cardId "${id}" is used by more than one action card; card ids must be unique across stages (action callbacks name only the card)`));
  problems.push(...duplicates(rules.map((rule) => stringOf(rule.ruleId)).filter((id): id is string => id !== undefined), (id) => `reflexionRules.${id}.ruleId: "${id}" is used by more than one rule; rule ids must be unique`));

  const stageList = `stages: ${[...stageIdSet].join(', ')}`;
  stages.forEach((stage, index) => {
    const where = stageName(stage, index);
    const next = stage.nextStageId;
    if (typeof next === 'string' && !stageIdSet.has(next)) problems.push(`${where}.nextStageId: "${next}" is not a stage id (${stageList}); use one of them, or null for the last stage`);
    if (stage.transitionMode === 'condition') {
      if (stage.transitionCondition === undefined) problems.push(`${where}.transitionCondition: a condition transition needs transitionCondition, a JSON Logic expression over the context such as {">=": [{"var": "sampleSize.total"}, 1]}`);
      else problems.push(...logicProblems(stage.transitionCondition, `${where}.transitionCondition`, contextFields));
    }
    const schema = stage.extractionSchema;
    if (isObject(schema) && !isObject(schema.properties)) {
      problems.push(`${where}.extractionSchema.properties: must be an object naming the fields the stage records (JSON Schema, e.g. {"question": {"type": "string"}}); without it nothing the model extracts can be kept`);
    }
    if (Array.isArray(stage.availableToolIds)) {
      for (const tool of stage.availableToolIds) {
        if (typeof tool === 'string' && !deps.toolNames.has(tool)) problems.push(`${where}.availableToolIds: "${tool}" is not a registered tool (${[...deps.toolNames].sort().join(', ') || 'none registered'})`);
      }
    }
    list(stage.actionCards).forEach((card, cardIndex) => {
      const cardWhere = `${where}.actionCards.${stringOf(card.cardId) ?? cardIndex}`;
      if (card.triggerType === 'condition') {
        if (card.triggerCondition === undefined) problems.push(`${cardWhere}.triggerCondition: a condition card needs triggerCondition, a JSON Logic expression over the context`);
        else problems.push(...logicProblems(card.triggerCondition, `${cardWhere}.triggerCondition`, contextFields));
      }
      if (card.resultTool !== undefined) {
        if (typeof card.resultTool === 'string' && !deps.toolNames.has(card.resultTool)) problems.push(`${cardWhere}.resultTool: "${card.resultTool}" is not a registered tool (${[...deps.toolNames].sort().join(', ') || 'none registered'})`);
        if (!isObject(card.resultMapping) || !Object.keys(card.resultMapping).length) problems.push(`${cardWhere}.resultMapping: a card with a resultTool needs a resultMapping (result key -> context path) saying where the tool's result is recorded`);
      }
      if (card.resultClaimPattern !== undefined) {
        const checked = checkRulePattern(card.resultClaimPattern);
        if (checked.problem) problems.push(`${cardWhere}.resultClaimPattern: ${checked.problem}`);
        if (card.resultTool === undefined) problems.push(`${cardWhere}.resultClaimPattern: only a card with a resultTool can tell a stated result from a computed one; add resultTool`);
      }
      if (card.actionType === 'deep_link') {
        const url = isObject(card.actionPayload) ? card.actionPayload.url : undefined;
        // A path inside the console only: `//host` and `/\host` are read by browsers as another site.
        if (typeof url !== 'string' || !url.startsWith('/') || /^\/[/\\]/.test(url)) {
          problems.push(`${cardWhere}.actionPayload.url: a deep_link card needs a url inside the console, starting with a single "/" (e.g. "/tools/sample-size"); got ${JSON.stringify(url) ?? 'nothing'}`);
        }
      }
    });
  });

  rules.forEach((rule, index) => {
    const where = `reflexionRules.${stringOf(rule.ruleId) ?? index}`;
    const trigger = rule.triggerStageId;
    if (typeof trigger === 'string' && !stageIdSet.has(trigger)) problems.push(`${where}.triggerStageId: "${trigger}" is not a stage id (${stageList}); leave it out to check every stage`);
    if (rule.ruleType === 'rule_based' || rule.ruleType === 'hybrid') {
      if (!isObject(rule.ruleLogic)) problems.push(`${where}.ruleLogic: ${rule.ruleType} rules need ruleLogic ({field, condition, value?}); use prompt_based for a check only the model makes`);
      else problems.push(...ruleLogicProblems(rule.ruleLogic, `${where}.ruleLogic`, deps.validators));
    }
  });
  return problems;
}

function ruleLogicProblems(logic: Record<string, unknown>, where: string, validators: ReadonlySet<string>): string[] {
  switch (logic.condition) {
    case 'pattern': {
      const problem = checkRulePattern(logic.value).problem;
      return problem ? [`${where}.value: ${problem}`] : [];
    }
    case 'min_length':
    case 'max_length':
      return typeof logic.value === 'number' && Number.isInteger(logic.value) && logic.value >= 0
        ? []
        : [`${where}.value: ${logic.condition} needs a whole number of characters (or list items) as value; got ${JSON.stringify(logic.value) ?? 'nothing'}`];
    case 'custom': {
      const name = logic.customValidator;
      if (typeof name === 'string' && validators.has(name)) return [];
      return [`${where}.customValidator: ${typeof name === 'string' ? `"${name}" is not a registered validator` : 'custom rules need customValidator'} (registered: ${[...validators].sort().join(', ') || 'none'})`];
    }
    default:
      return [];
  }
}

/**
 * Compiles with the engine that evaluates conditions (context-logic.ts), and checks each operation and variable:
 * json-logic-engine refuses an unknown operator without naming it, and a misspelt variable reads as missing, so the
 * condition would silently never hold.
 */
function logicProblems(logic: unknown, where: string, contextFields: ReadonlySet<string>): string[] {
  const walk = { operators: new Set<string>(), variables: new Set<string>(), malformed: [] as string[] };
  visitLogic(logic, walk, false);
  const problems = walk.malformed.map((problem) => `${where}: ${problem}`);
  const unknownOperators = [...walk.operators].filter((operator) => !OPERATORS.has(operator));
  if (unknownOperators.length) problems.push(`${where}: unknown JSON Logic operator ${unknownOperators.map((name) => `"${name}"`).join(', ')} (valid: ${[...OPERATORS].join(' ')})`);
  if (!problems.length) {
    const problem = conditionProblem(logic);
    if (problem) problems.push(`${where}: cannot be compiled as JSON Logic: ${problem}`);
  }
  for (const name of walk.variables) {
    if (!contextFields.has(name.split('.')[0]!)) problems.push(`${where}: variable "${name}" does not start with a context field (${[...contextFields].join(', ')})`);
  }
  return problems;
}

/** json-logic-engine's standard operators, the only ones conditions get (context-logic.ts adds none). */
const OPERATORS = new Set(Object.keys(new LogicEngine().methods as Record<string, unknown>));
/** Operators whose later arguments read an item of a list, not the context: their variables are not context paths. */
const RESCOPING = new Set(['map', 'filter', 'reduce', 'all', 'some', 'none', 'every', 'pipe', 'try', 'eachKey']);

function visitLogic(node: unknown, walk: { operators: Set<string>; variables: Set<string>; malformed: string[] }, isRescoped: boolean): void {
  if (Array.isArray(node)) {
    for (const item of node) visitLogic(item, walk, isRescoped);
    return;
  }
  if (!isObject(node)) return;
  const keys = Object.keys(node);
  if (keys.length !== 1) {
    if (keys.length > 1) walk.malformed.push(`an operation has exactly one operator key, found ${keys.join(', ')}; wrap a literal object in {"preserve": ...}`);
    return;
  }
  const operator = keys[0]!;
  const args = node[operator];
  walk.operators.add(operator);
  if (operator === 'preserve') return;
  if (operator === 'var') {
    const name = Array.isArray(args) ? args[0] : args;
    if (typeof name === 'string' && name !== '' && !isRescoped) walk.variables.add(name);
    if (typeof name !== 'string') visitLogic(args, walk, isRescoped);
    return;
  }
  if (RESCOPING.has(operator) && Array.isArray(args)) args.forEach((arg, i) => visitLogic(arg, walk, isRescoped || i > 0));
  else visitLogic(args, walk, isRescoped);
}

function duplicates(values: readonly string[], describe: (value: string) => string): string[] {
  const seen = new Set<string>();
  const repeated = new Set<string>();
  for (const value of values) (seen.has(value) ? repeated : seen).add(value);
  return [...repeated].map(describe);
}
