import type { User } from '../../core/auth/users.js';
import type { AgentDefinition, AgentKind, StopSettings } from './agent-definition.js';
import { answerOf } from './answer-of.js';
import type { AnswerSchema } from './answer-schema.js';

/** One agent as GET /api/agents lists it: what it is, what runs it, what it may use, what it answers, where it stops. */
export interface AgentDescription {
  id: string;
  name: string;
  description: string;
  kind: AgentKind;
  /** The built-in loop, or a Dify app (its mode and host; the URL's path and the key variable stay server-side). */
  engine: { type: 'builtin' } | { type: 'dify'; appMode: string; host: string };
  tools: string[];
  /** Tools bound to one request (a project's records), offered when the run has them. */
  requestTools: string[];
  answer: { format: AnswerSchema<unknown>['format']; schema: Record<string, unknown> };
  limits: StopSettings;
  stages?: Array<{ id: string; name: string; transition: string }>;
}

/**
 * The kind an agent is: its own declaration, else what its source says. A staged agent has stages; a file is a
 * scenario; an agent declared in code is a one-round call when it has one round, and runs inside a feature otherwise.
 */
export function agentKind(definition: AgentDefinition<any, any>): AgentKind {
  if (definition.kind) return definition.kind;
  if (definition.stages?.length) return 'staged';
  if (!definition.sourceFile.startsWith('builtin:')) return 'scenario';
  return definition.stop.maxRounds === 1 ? 'one_shot' : 'internal';
}

export function describeAgent(definition: AgentDefinition<any, any>): AgentDescription {
  const answer = answerOf(definition);
  const engine = definition.engine;
  return {
    id: definition.id,
    name: definition.name,
    description: definition.description,
    kind: agentKind(definition),
    engine: engine.type === 'dify' ? { type: 'dify', appMode: engine.appMode, host: hostOf(engine.baseUrl) } : { type: 'builtin' },
    tools: [...definition.tools],
    requestTools: [...(definition.requestTools ?? [])],
    answer: { format: answer.format, schema: answer.jsonSchema },
    limits: { ...definition.stop },
    ...(definition.stages ? { stages: definition.stages.map((stage) => ({ id: stage.id, name: stage.name, transition: stage.transition })) } : {}),
  };
}

/** Kinds a person starts themselves; the rest run inside features (a QC run, a chat's routing, upkeep jobs). */
const STARTED_BY_PEOPLE: ReadonlySet<AgentKind> = new Set(['scenario', 'staged', 'conversation']);

/**
 * The agents a user may see listed: admins every one; anyone else those they can start (scenarios, staged agents,
 * conversations). Internal and one-round agents show prompts and schemas that are the operator's business.
 */
export function agentsVisibleTo(definitions: readonly AgentDefinition<any, any>[], role: User['role']): AgentDescription[] {
  const described = definitions.map(describeAgent);
  return role === 'admin' ? described : described.filter((agent) => STARTED_BY_PEOPLE.has(agent.kind));
}

function hostOf(baseUrl: string): string {
  try {
    return new URL(baseUrl).host;
  } catch {
    return '';
  }
}
