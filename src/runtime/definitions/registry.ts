import { ClinAgentError } from '../../core/errors.js';
import type { ToolRegistry } from '../../core/tools/registry.js';
import type { AgentDefinition } from './agent-definition.js';
import { definitionProblems, validateDefinition } from './validate-definition.js';

/**
 * An agent's id carrying the types of its input and answer, so a runner that resolves its definition from the
 * registry (Mastra's `getAgent(id)`) gets it typed: `agents.get(SOFT_RULE_AGENT)` is an AgentDefinition<SoftRuleInput, SoftRuleVerdict>.
 */
export type AgentId<I, O> = string & { readonly __agentTypes?: (input: I) => O };

export function agentId<I, O>(id: string): AgentId<I, O> {
  return id as AgentId<I, O>;
}

/** Every agent the runtime can run, by id: scenarios from files and the agents declared in code alike. */
export interface AgentRegistry {
  /** Validates first (AGENT_INVALID naming the file, the field and what is allowed); an id is registered once. */
  register(definition: AgentDefinition<any, any>): void;
  /** Registers all, or none: one AGENT_INVALID listing the problems of every invalid definition (start-up). */
  registerAll(definitions: readonly AgentDefinition<any, any>[]): void;
  /** Throws NOT_FOUND naming the known ids. */
  get<I = any, O = any>(id: AgentId<I, O>): AgentDefinition<I, O>;
  has(id: string): boolean;
  list(): AgentDefinition<any, any>[];
}

// The id may come from a request: a megabyte of it must not come back in the error.
const ID_CHARS_SHOWN = 60;

export function createAgentRegistry(tools: Pick<ToolRegistry, 'list'>): AgentRegistry {
  const byId = new Map<string, AgentDefinition<any, any>>();
  const duplicate = (definition: AgentDefinition<any, any>, otherFile: string) => `${definition.sourceFile}: id: "${definition.id}" is already used by ${otherFile}; agent ids must be unique`;
  return {
    register(definition) {
      const other = byId.get(definition.id);
      if (other) {
        throw new ClinAgentError('AGENT_INVALID', `${duplicate(definition, other.sourceFile)}.`, { agentId: definition.id, sourceFile: definition.sourceFile, otherSourceFile: other.sourceFile });
      }
      validateDefinition(definition, tools);
      byId.set(definition.id, definition);
    },
    registerAll(definitions) {
      const problems: string[] = [];
      const files = new Map([...byId].map(([id, definition]) => [id, definition.sourceFile]));
      for (const definition of definitions) {
        const otherFile = files.get(definition.id);
        if (otherFile) problems.push(duplicate(definition, otherFile));
        else files.set(definition.id, definition.sourceFile);
        problems.push(...definitionProblems(definition, tools));
      }
      if (problems.length) throw new ClinAgentError('AGENT_INVALID', `Agent definitions are not valid, so the server cannot start:\n${problems.join('\n')}`, { problems });
      for (const definition of definitions) byId.set(definition.id, definition);
    },
    get<I, O>(id: AgentId<I, O>) {
      const definition = byId.get(id) as AgentDefinition<I, O> | undefined;
      if (!definition) {
        const shown = id.length > ID_CHARS_SHOWN ? `${id.slice(0, ID_CHARS_SHOWN)}…` : id;
        throw new ClinAgentError('NOT_FOUND', `Unknown agent "${shown}". Known agents: ${[...byId.keys()].join(', ') || '(none)'}.`, { agentId: shown });
      }
      return definition;
    },
    has: (id) => byId.has(id),
    list: () => [...byId.values()],
  };
}
