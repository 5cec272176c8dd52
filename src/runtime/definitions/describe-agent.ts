import { WRITER_ROLES, type User } from '../../core/auth/users.js';
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
  engine: { type: 'builtin' } | { type: 'dify'; appMode: string; host: string } | { type: 'openai-agents' };
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
    engine: engine.type === 'dify' ? { type: 'dify', appMode: engine.appMode, host: hostOf(engine.baseUrl) } : { type: engine.type },
    tools: [...definition.tools],
    requestTools: [...(definition.requestTools ?? [])],
    answer: { format: answer.format, schema: answer.jsonSchema },
    limits: { ...definition.stop },
    ...(definition.stages ? { stages: definition.stages.map((stage) => ({ id: stage.id, name: stage.name, transition: stage.transition })) } : {}),
  };
}

/**
 * Who may start an agent, as the access of the route that starts it (http/access.ts): `self` any signed-in user,
 * `write` a writer role. Undefined: no person starts it; it runs inside a feature (a QC run, a chat's routing, upkeep).
 */
export type StartAccess = 'self' | 'write' | undefined;

/**
 * The agents a user may see listed: admins every one; anyone else those their role may start, so a viewer is not
 * offered a scenario its run route would refuse. Internal and one-round agents show prompts and schemas that are
 * the operator's business.
 */
export function agentsVisibleTo(definitions: readonly AgentDefinition<any, any>[], role: User['role'], startAccess: (definition: AgentDefinition<any, any>) => StartAccess): AgentDescription[] {
  const mayStart = (access: StartAccess) => access === 'self' || (access === 'write' && WRITER_ROLES.has(role));
  const visible = role === 'admin' ? definitions : definitions.filter((definition) => mayStart(startAccess(definition)));
  return visible.map(describeAgent);
}

function hostOf(baseUrl: string): string {
  try {
    return new URL(baseUrl).host;
  } catch {
    return '';
  }
}
