import type { ConversationStore } from '../runtime/conversations/index.js';
import type { AgentRegistry } from '../runtime/definitions/index.js';
import type { AgentEvent, AgentEventSink } from '../runtime/loop/index.js';
import type { PlannedPart } from '../runtime/loop/events.js';
import type { ChatMessage } from '../core/llm/types.js';
import { assertProjectReader } from '../core/auth/project-access.js';
import type { MembershipCheck } from '../core/auth/membership.js';
import { WRITER_ROLES, type User } from '../core/auth/users.js';
import type { Config } from '../core/config.js';
import { ClinAgentError, errorMessage } from '../core/errors.js';
import type { LlmGateway } from '../core/llm/gateway.js';
import type { Logger } from '../core/logger.js';
import type { ToolRegistry } from '../core/tools/registry.js';
import type { TraceRun, TraceStore } from '../core/trace/store.js';
import { INVESTIGATE_DEFINITION, investigate, type InvestigateResult } from '../investigate/index.js';
import type { ProjectMemory } from '../memory/index.js';
import { detectLanguage, routeIntent, type Intent, type RoutedMessage, type RoutingFallback } from './routing/route-intent.js';
import { skillAppliesTo } from '../trial/sop/skill-catalog.js';
import type { ReadToolService } from '../trial/read-tools/read-tool-service.js';
import type { QcService } from '../trial/qc/qc-service.js';
import type { SkillService } from '../trial/skills/skill-service.js';
import { composeAnswer, failedAnswer, forbiddenAnswer, internalErrorAnswer, memoryFullAnswer, notRememberedAnswer, qcStartedAnswer, rememberedAnswer, unclearAnswer, unreadableAnswer, writeRequestGuidance, type Language } from './guidance.js';
import { createStructureHold, isRawStructure } from './person-answer.js';

/**
 * The trial assistant (seed 000 section 6, seed 002): one chat message in, one answer out. The message is split
 * into intents, each handled in order by the part of the platform it belongs to, and the answers are joined in
 * that order:
 * - QC tasks start a QC run on the SOP engine (writers only); the prompt for them holds no history;
 * - data, history and small-talk questions go to the read-only ReAct engine with hot memory and the user's
 *   profile; only history questions also get the weekly reports;
 * - memory instructions are written to hot memory through its one write function, with this turn as source;
 * - write requests are never carried out: the answer guides the user to the QC flow.
 * The user sees only final answers; the whole run (routing, thoughts, tool calls, observations) is one trace
 * that only admins read.
 */
interface TrialAssistantDeps {
  config: Pick<Config, 'assistant'>;
  llm: LlmGateway;
  trace: TraceStore;
  tools: ToolRegistry;
  conversations: ConversationStore;
  users: MembershipCheck;
  memory: ProjectMemory;
  /** The trial services it calls (the context's `trial` has them): its project's read tools, starting a QC run, the active skills. */
  trial: { readTools: Pick<ReadToolService, 'forProject'>; qc: Pick<QcService, 'startQcRun'>; skills: Pick<SkillService, 'active'> };
  logger: Logger;
  /** The registry the router's and the question engine's definitions are resolved from. */
  agents: Pick<AgentRegistry, 'get'>;
}

type ChatEnding = 'answer' | 'max_rounds' | 'token_budget' | 'error_breaker' | 'guided' | 'started' | 'remembered' | 'forbidden' | 'failed';

interface ChatPart {
  intent: Intent;
  answer: string;
  ok: boolean;
  ending: ChatEnding;
  qcRunId?: string;
}

interface ChatAnswer {
  answer: string;
  intents: Intent[];
  routedBy: RoutedMessage['by'];
  routingFallback: RoutingFallback | null;
  parts: ChatPart[];
  conversationId: string;
  turnSeq: number;
  traceId: string;
}

interface ChatOptions {
  /** What a streaming client sees while the answer is made: the run events of every agent, `part` being the intent. */
  onEvent?: AgentEventSink;
  signal?: AbortSignal;
}

export function createTrialAssistant(deps: TrialAssistantDeps) {
  /**
   * Everything that can refuse a question before any work starts: membership, an empty message, a conversation
   * that is not the asker's in this project. A streaming route calls it before it opens the stream, so a refusal is
   * a plain 4xx and never a 200 followed by an error event.
   */
  async function checkQuestion(actor: User, projectId: string, input: { message: string; conversationId?: string }): Promise<string> {
    await assertProjectReader(deps.users, actor, projectId);
    const message = input.message.trim();
    if (!message) throw new ClinAgentError('VALIDATION_FAILED', 'body.message: must not be empty; type a question.', { field: 'message' });
    if (input.conversationId) await ownConversation(actor, projectId, input.conversationId);
    return message;
  }

  async function chat(actor: User, projectId: string, input: { message: string; conversationId?: string }, options: ChatOptions = {}): Promise<ChatAnswer> {
    const message = await checkQuestion(actor, projectId, input);
    const { conversationId, earlier } = await openConversation(actor, projectId, input.conversationId, message);
    const trace = await deps.trace.start({ kind: 'assistant', name: 'trial_assistant', userId: actor.id, projectId, adminOnly: true, input: { message, conversationId } });
    const emit = options.onEvent ?? (() => {});
    emit({ type: 'run_started', traceId: trace.traceId, conversationId });
    try {
      const [userTurn] = await deps.conversations.append(conversationId, [{ role: 'user', content: message, traceId: trace.traceId }], actor);
      const routed = await routeIntent({ llm: deps.llm, trace, agents: deps.agents }, message, { skills: projectSkills(projectId), signal: options.signal });
      emit({ type: 'plan', parts: routed.intents.map(plannedPart), routedBy: routed.by, routingFallback: routed.fallback ?? null });
      if (routed.fallbackReason) deps.logger.warn({ projectId, reason: routed.fallbackReason }, 'trial assistant: keyword rules routed the message');
      const language = await answerLanguage(actor, routed);
      const parts: ChatPart[] = [];
      for (const [index, intent] of routed.intents.entries()) {
        emit({ type: 'part_started', part: index, planned: plannedPart(intent) });
        const question = routed.intents.length === 1 ? message : intent.text;
        const part = await handle({ actor, projectId, intent, question, language, trace, earlier, index, emit, signal: options.signal, source: `${conversationId}#${userTurn!.seq}` });
        parts.push(part);
        emit({ type: 'part_finished', part: index, planned: plannedPart(part.intent), answer: part.answer, ok: part.ok, ending: part.ending });
      }
      const answer = composeAnswer(parts, language);
      const [assistantTurn] = await deps.conversations.append(conversationId, [{ role: 'assistant', content: answer, traceId: trace.traceId }], actor);
      await trace.finish({ status: 'success', output: { answer, intents: routed.intents, routedBy: routed.by, fallbackReason: routed.fallbackReason, endings: parts.map((p) => p.ending) } });
      return { answer, intents: routed.intents, routedBy: routed.by, routingFallback: routed.fallback ?? null, parts, conversationId, turnSeq: assistantTurn!.seq, traceId: trace.traceId };
    } catch (error) {
      const cancelled = ClinAgentError.isInstance(error) && error.code === 'CANCELLED';
      await trace.finish({ status: cancelled ? 'cancelled' : 'failed', error: errorMessage(error) });
      throw error;
    }
  }

  /**
   * A new conversation about this project, or the user's own earlier one (checkQuestion has refused another
   * project's): its earlier turns as the question engine's history strategy builds them from the log.
   */
  async function openConversation(actor: User, projectId: string, conversationId: string | undefined, message: string): Promise<{ conversationId: string; earlier: ChatMessage[] }> {
    if (!conversationId) {
      const started = await deps.conversations.start({ actor, projectId, title: message });
      return { conversationId: started.id, earlier: [] };
    }
    const earlier = await deps.conversations.history(conversationId, INVESTIGATE_DEFINITION.history, { actor, llm: deps.llm });
    return { conversationId, earlier };
  }

  async function ownConversation(actor: User, projectId: string, conversationId: string) {
    const found = await deps.conversations.get(conversationId, actor);
    if (found.projectId !== projectId || found.userId !== actor.id) {
      throw new ClinAgentError('NOT_FOUND', `Conversation "${conversationId}" does not exist in project "${projectId}". Leave conversationId out to start a new one.`, { conversationId });
    }
    return found;
  }

  function projectSkills(projectId: string) {
    return deps.trial.skills.active().filter((s) => skillAppliesTo(s, projectId));
  }

  /** The profile's language when the user set one; else the language of the message. */
  async function answerLanguage(actor: User, routed: RoutedMessage): Promise<Language> {
    const profile = await deps.memory.profiles.get(actor, actor.id);
    return profile.language === 'auto' ? routed.language : profile.language;
  }

  interface PartInput {
    actor: User;
    projectId: string;
    intent: Intent;
    question: string;
    language: Language;
    trace: TraceRun;
    earlier: ChatMessage[];
    index: number;
    emit: AgentEventSink;
    signal?: AbortSignal;
    /** The user turn this message is, as a hot-memory source. */
    source: string;
  }

  async function handle(part: PartInput): Promise<ChatPart> {
    const { intent, language } = part;
    try {
      switch (intent.type) {
        case 'qc_task':
          return await startQc(part);
        case 'memory_instruction':
          return await remember(part);
        case 'write_request':
          return { intent, answer: writeRequestGuidance(part.projectId, language), ok: true, ending: 'guided' };
        case 'unclear':
          return { intent, answer: unclearAnswer(language), ok: true, ending: 'guided' };
        default:
          return await answerQuestion(part);
      }
    } catch (error) {
      if (ClinAgentError.isInstance(error) && error.code === 'CANCELLED') throw error;
      // One part failing (the model down, no records to check) leaves the other parts' answers standing.
      deps.logger.warn({ err: error, intent: intent.type }, 'trial assistant: one part of a message failed');
      // Our errors are written for the user; anything else (a database fault, a bug) may hold SQL or internals.
      const answer = ClinAgentError.isInstance(error) ? failedAnswer(error.message, language) : internalErrorAnswer(part.trace.traceId, language);
      return { intent, answer, ok: false, ending: 'failed' };
    }
  }

  /** What the member may do here goes by their role in this project (membership was checked when the message came). */
  const roleIn = async (projectId: string, actor: User) => (await deps.users.roleIn(projectId, actor)) ?? actor.role;

  async function startQc({ actor, projectId, intent, language }: PartInput): Promise<ChatPart> {
    const role = await roleIn(projectId, actor);
    if (!WRITER_ROLES.has(role)) return { intent, answer: forbiddenAnswer('qc', role, language), ok: false, ending: 'forbidden' };
    const skills = projectSkills(projectId);
    const skill = skills.find((s) => s.id === intent.skillId) ?? skills[0];
    if (!skill) throw new ClinAgentError('CONFLICT_STATE', `No QC skill applies to project "${projectId}". An admin adds one under skills/.`, { projectId });
    const run = await deps.trial.qc.startQcRun(actor, projectId, skill.id, intent.recordIds?.length ? intent.recordIds : undefined);
    return { intent, answer: qcStartedAnswer({ id: run.id, skill: skill.name, records: run.total }, language), ok: true, ending: 'started', qcRunId: run.id };
  }

  async function remember({ actor, projectId, intent, language, source, trace }: PartInput): Promise<ChatPart> {
    const role = await roleIn(projectId, actor);
    if (!WRITER_ROLES.has(role)) return { intent, answer: forbiddenAnswer('memory', role, language), ok: false, ending: 'forbidden' };
    const fact = intent.fact ?? { section: 'preferences' as const, text: intent.text };
    try {
      // The fact is the router model's reading of the message; hot memory stores it only as the person's own words
      // in this turn (src/memory/hot/own-words.ts) and refuses anything else. The step puts the proposed line and
      // the outcome, stored or refused with its reason, in the admins' trace.
      const newFact = { ...fact, source: { kind: 'turn' as const, ref: source } };
      const written = await trace.span('step', 'memory.remember', newFact, () => deps.memory.hot.addFacts(actor, projectId, [newFact], 'chat'), (result) => ({ output: { changed: result.changed, version: result.memory.version } }));
      return { intent, answer: rememberedAnswer(fact.text, written.changed, language), ok: true, ending: 'remembered' };
    } catch (error) {
      if (ClinAgentError.isInstance(error) && error.code === 'MEMORY_OVER_CAP') return { intent, answer: memoryFullAnswer(error.message, language), ok: false, ending: 'failed' };
      // The refusal's lines name fields of the write API (facts.0.text: ...); the span above keeps them for admins.
      if (ClinAgentError.isInstance(error) && error.code === 'VALIDATION_FAILED') return { intent, answer: notRememberedAnswer(language), ok: false, ending: 'failed' };
      throw error;
    }
  }

  async function answerQuestion({ actor, projectId, intent, question, language, trace, earlier, index, emit, signal }: PartInput): Promise<ChatPart> {
    // Seed 002: hot memory always; weekly reports only for history questions, never for anything else.
    const [hotMemory, profile, history, tools] = await Promise.all([
      deps.memory.hot.promptBlock(projectId),
      deps.memory.profiles.promptBlock(actor.id),
      intent.type === 'history_question' ? deps.memory.reports.promptBlock(projectId) : Promise.resolve(undefined),
      deps.trial.readTools.forProject(actor, projectId),
    ]);
    const holds = new Map<number, ReturnType<typeof createStructureHold>>();
    const result: InvestigateResult = await investigate({
      agents: deps.agents,
      llm: deps.llm,
      trace,
      registry: deps.tools.extend(tools),
      question,
      language,
      context: { hotMemory, profile, history: history || undefined, earlier },
      limits: { maxIterations: deps.config.assistant.maxIterations, tokenBudget: deps.config.assistant.tokenBudget },
      signal,
      onEvent: (event) => {
        // Each round's text is held until it shows it is prose: a data structure is never streamed (see below).
        if (event.type === 'text_delta' || event.type === 'round_finished') {
          const hold = holds.get(event.round) ?? holds.set(event.round, createStructureHold()).get(event.round)!;
          const text = event.type === 'text_delta' ? hold.push(event.text) : hold.end();
          if (text) emit({ type: 'text_delta', round: event.round, text, part: index });
          if (event.type === 'text_delta') return;
        }
        const shown = shownToUser(event, index);
        if (shown) emit(shown);
      },
    });
    if (result.ok && isRawStructure(result.answer)) {
      // The text stays in the admins' trace (the loop recorded it); the person gets a sentence.
      return trace.span('step', 'assistant.unreadable_answer', { part: index, chars: result.answer.length }, async () => ({ intent, answer: unreadableAnswer(language), ok: false, ending: 'failed' as const }), () => ({ status: 'failed', error: 'the model answered with a data structure, not words; it was not shown' }));
    }
    return { intent, answer: result.answer, ok: result.ok, ending: result.ending };
  }

  return { chat, checkQuestion };
}

export type TrialAssistant = ReturnType<typeof createTrialAssistant>;

/**
 * An intent as the shared events carry a planned part: its label and words. The rest (records, skill, the fact to
 * remember) is the assistant's own vocabulary and goes in its result, ChatAnswer.
 */
function plannedPart(intent: Intent): PlannedPart {
  return { type: intent.type, text: intent.text };
}

/**
 * A loop event of one part as the user may see it, tagged with the part: tool names without their arguments or
 * errors (those may quote data and stay in the trace that only admins read).
 */
function shownToUser(event: AgentEvent, part: number): AgentEvent | undefined {
  switch (event.type) {
    case 'text_delta':
    case 'round_finished':
      return { ...event, part };
    case 'tool_call_started':
      return { type: event.type, round: event.round, callId: event.callId, name: event.name, part };
    case 'tool_call_finished':
      return { type: event.type, round: event.round, callId: event.callId, name: event.name, success: event.success, part };
    default:
      return undefined;
  }
}
