import { and, eq } from 'drizzle-orm';
import { createHash } from 'node:crypto';
import { z } from 'zod';
import type { AgentRegistry } from '../../runtime/definitions/registry.js';
import { runDefinition } from '../../runtime/loop/run-definition.js';
import { MAX_ANSWER_CHARS } from '../../runtime/loop/correction.js';
import { tokenBudget } from '../../runtime/loop/stop-conditions.js';
import type { AgentEventSink } from '../../runtime/loop/events.js';
import { createConversationRuns, type ConversationRun, type ConversationInput, type ConversationRunDeps } from '../../runtime/runs/conversation-runs.js';
import { mergeStageData } from '../../runtime/staged/context-paths.js';
import type { User } from '../../core/auth/users.js';
import { assertWriterRole } from '../../core/auth/project-access.js';
import type { RunReview } from '../../runtime/runs/run-shape.js';
import { consultAttachments } from '../../core/db/schema/consult.js';
import { ClinAgentError, errorMessage } from '../../core/errors.js';
import { UUID_PATTERN } from '../../core/ids.js';
import type { LlmGateway } from '../../core/llm/gateway.js';
import { dataBlock } from '../../core/llm/untrusted-data.js';
import { parseStructuredOutput } from '../../core/structured/parse.js';
import { createToolRegistry, type ToolRegistry } from '../../core/tools/registry.js';
import { answeredTurn, createClientMessages, messageFingerprint, reusedIdError } from './client-messages.js';
import type { ConsultReply, ConsultState } from './consult-state.js';
import { CONSULT_AGENT_ID } from './definition.js';
import { buildDossier, createDossierStore, createDossierTool, recordedFindings, recordToolOutputs } from './dossier/index.js';
import { checkImage, createAnalyzeSkinImageTool, decodeImageBase64 } from './image/index.js';
import { consultMedicationTool } from './medication/index.js';
import { normalizeMedicalContext } from './normalize-context.js';
import { patientLanguage } from './patient-language.js';
import { patientNotice, type PatientNotice } from './patient-notices.js';
import { responseStreamer } from './response-stream.js';
import { assessRisk, LEVEL_GUIDANCE, leadWithGuidance } from './risk/index.js';
import { checkedTurn, excludedDrugStream, identifierFreeHistory, identifierFreeModel, patientExclusions, patientWordsOf, redactIdentifierText } from './safety/index.js';
import type { MedicalContext, RiskAssessment } from './types.js';

export interface ConsultServiceDeps extends ConversationRunDeps {
  llm: LlmGateway;
  /** The registry with the consult's shared tools (knowledge, risk, medication). */
  tools: ToolRegistry;
  /** Every agent by id: each turn runs the consult's definition as registered there (CONSULT_AGENT_ID). */
  agents: Pick<AgentRegistry, 'get'>;
  /** The vision model (VISION_MODEL); absent, image turns go on without it. */
  vision?: { gateway: LlmGateway; model: string };
  maxImageBytes: number;
  /** Tokens one consult may use in all (CONSULT_TOKEN_BUDGET). */
  tokenBudget: number;
  /** Readies what the tools read (the knowledge base) before a turn; called every turn, cheap once done. */
  prepare?: () => Promise<unknown>;
}

/** An image as a request brings it: base64 (JSON) or the bytes of a multipart file. */
export type IncomingImage = { base64: string; name?: string } | { bytes: Buffer; name?: string };

/** A reply and the risk assessment it was composed with. */
interface Judged {
  reply: ConsultReply;
  risk: RiskAssessment;
}

/**
 * One patient message as the consult's run stores it: the text (identifiers replaced) and the image it came with.
 * Consults whose message was taken before the input was typed kept it as that object in JSON text; read the same.
 */
const ConsultInput = z.object({ text: z.string(), attachmentId: z.string().uuid().optional(), clientMessageId: z.string().regex(new RegExp(UUID_PATTERN)).optional() });
export type ConsultInput = z.infer<typeof ConsultInput>;
const StoredConsultInput = z.union([ConsultInput, z.string().transform((text, ctx) => {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    ctx.addIssue({ code: 'custom', message: 'not the JSON of a consult message' });
    return z.NEVER;
  }
}).pipe(ConsultInput)]);

const INITIAL_RISK: RiskAssessment = { risk_level: 'low', score: 0, red_flags: [], advice: '' };

/**
 * The dermatology consult (seed 003): each patient message is one step of a durable conversation run; in it the
 * model decides every round itself (use a tool, respond and wait, diagnose) on the one loop, keeps the medical
 * context, and a deterministic risk check on what the patient said stands above whatever it decided.
 */
export function createConsultService(deps: ConsultServiceDeps) {
  const dossiers = createDossierStore(deps.db);
  const clientMessages = createClientMessages(deps.db);
  const runs = createConversationRuns<ConsultState, ConsultInput>({
    ...deps,
    // A message's clientMessageId is recorded with the message, in the transaction that takes it (client-messages.ts).
    onDecision: async (tx, run, decision) => {
      if (decision.kind === 'answer') await clientMessages.onTaken(tx, run.id, run.state as unknown as ConsultState, decision.input as ConsultInput);
    },
    kindPrefix: 'consult:',
    input: StoredConsultInput,
    label: 'Consult',
    traceKind: 'consult',
    traceInput: (_run, state) => ({ status: state.status, riskLevel: state.risk.risk_level }),
    // Every reply is checked against the patient's excluded drugs before anyone sees it: streamed sentence by
    // sentence, then the saved reply with what the turn recorded (safety/check-turn.ts).
    step: async (run, { given, state, trace, onEvent, signal }) => {
      const input = messageOf(given);
      const guarded = onEvent && excludedDrugStream(onEvent, patientExclusions(state.medicalContext, patientWordsOf(state, input.text)));
      return checkedTurn(await turn(run, state, input, trace, guarded, signal), trace);
    },
    chargeTokens: (state, tokens) => ({ ...state, tokensUsed: state.tokensUsed + tokens }),
    // The model down, or a fault: the risk check needs no model, so the turn is recorded with its advice anyway.
    recover: (_run, { given, state, error, trace }) => unanswered(state, messageOf(given), error, trace.traceId),
    exchangeOf(state) {
      const [asked, answered] = state.turns.slice(-2);
      return asked?.role === 'user' && answered?.role === 'assistant' ? { asked: asked.content, answered: answered.content, traceId: state.lastReply?.traceId } : undefined;
    },
  });

  async function turn(run: ConversationRun, state: ConsultState, { text, attachmentId, clientMessageId }: ConsultInput, trace: Parameters<typeof runDefinition>[1]['trace'], onEvent?: AgentEventSink, signal?: AbortSignal) {
    const asked = { role: 'user' as const, content: text, attachmentId, clientMessageId, at: new Date().toISOString() };
    const said = [...state.turns.filter((t) => t.role === 'user').map((t) => t.content), text];
    if (state.tokensUsed >= deps.tokenBudget) {
      // A consult that has used its budget answers without a model call, saying what the patient can still do.
      const judged = compose(state, { action: 'stopped', response: patientNotice('consult_budget', patientLanguage(said), { budget: deps.tokenBudget }), quickOptions: [] }, trace.traceId, said);
      return done(state, asked, judged, {});
    }
    await deps.prepare?.();
    // search_medication bound to this consult: its recorded pregnancy, allergies and age apply whatever the model passes.
    const registry = createToolRegistry().extend([
      ...deps.tools.list().filter((tool) => tool.name !== 'search_medication'),
      consultMedicationTool(() => patientExclusions(state.medicalContext, patientWordsOf(state, text)).patientInfo),
      createAnalyzeSkinImageTool({ vision: deps.vision, maxBytes: deps.maxImageBytes, loadAttachment: (ref: string) => loadAttachment(run.id, attachmentIdOf(state, ref)) }),
      createDossierTool({ store: dossiers, runId: run.id, userId: run.userId!, snapshot: async () => snapshotOf(state, patientWordsOf(state, text)) }),
    ]);
    const outcome = await runDefinition(deps.agents.get(CONSULT_AGENT_ID), {
      // What the model answers is without identifiers before the loop, a tool, a trace or this consult reads it.
      llm: identifierFreeModel(deps.llm),
      trace,
      registry,
      // Read through the same guards: consults saved before they applied may hold identifiers.
      input: { medicalContext: normalizeMedicalContext(state.medicalContext), history: identifierFreeHistory(state.messages), message: modelMessageOf(state, text, attachmentId) },
      // What the patient's words show already leads the streamed text, as it will lead the reply.
      onEvent: onEvent && responseStreamer(onEvent, { level: riskOf(normalizeMedicalContext(state.medicalContext), said).risk_level, language: patientLanguage(said) }),
      signal,
      // The consult's budget is checked before every model call of the turn, not only before the message.
      extraStop: [tokenBudget(deps.tokenBudget - state.tokensUsed)],
    });
    // The loop leaves a final answer out of its messages; the history keeps it, as the model's own last decision.
    const messages = outcome.kind === 'final' && outcome.messages.at(-1)?.role !== 'assistant' ? [...outcome.messages, { role: 'assistant' as const, content: outcome.content }] : outcome.messages;
    // Every decision of the turn may update the medical context, tool calls included (seed 003 section 4).
    const added = messages.slice(state.messages.length + 1);
    let medicalContext = state.medicalContext;
    let decision: Record<string, unknown> | undefined;
    for (const message of added) {
      if (message.role !== 'assistant' || typeof message.content !== 'string') continue;
      const parsed = parseStructuredOutput(message.content, { name: 'decision', schema: { type: 'object' } });
      if (!parsed.success) continue;
      decision = parsed.data;
      const update = parsed.data.medical_context_update;
      // Read into the consult's shape first: the model writes a string for a list, a number for a text, objects.
      if (update && typeof update === 'object' && !Array.isArray(update)) medicalContext = normalizeMedicalContext(mergeStageData(medicalContext, normalizeMedicalContext(update)));
    }
    const next: ConsultState = {
      ...state,
      messages: messages.slice(1),
      medicalContext,
      decision,
      toolResults: outcome.toolCalls.map((c) => ({ tool: c.toolName, success: c.success, ...(c.success ? {} : { error: c.error }) })),
      toolOutputs: recordToolOutputs(state.toolOutputs, outcome.toolCalls),
      tokensUsed: state.tokensUsed + outcome.progress.promptTokens + outcome.progress.completionTokens,
      attachments: state.attachments,
    };
    let judged: Judged;
    if (outcome.kind === 'waiting') {
      judged = compose(next, { action: 'respond', response: showable(stringOf(outcome.decision.response) || outcome.content, said), quickOptions: optionsOf(outcome.decision.quick_options) }, trace.traceId, said);
    } else if (outcome.kind === 'final') {
      const value: Record<string, unknown> = outcome.value;
      judged = compose(next, { action: 'diagnose', response: showable(stringOf(value.response) || stringOf(value.ready_reason) || 'I have enough information to conclude.', said), quickOptions: optionsOf(value.quick_options) }, trace.traceId, said);
      next.status = 'diagnosed';
    } else {
      const isConsultBudget = outcome.reason === 'token_budget' && next.tokensUsed >= deps.tokenBudget;
      const notice = isConsultBudget ? patientNotice('consult_budget', patientLanguage(said), { budget: deps.tokenBudget }) : patientNotice(stoppedNotice(outcome.reason), patientLanguage(said));
      judged = compose(next, { action: 'stopped', response: notice, quickOptions: [] }, trace.traceId, said);
    }
    return done(next, asked, judged, { action: judged.reply.action, riskLevel: judged.risk.risk_level, tools: next.toolResults.map((r) => r.tool) });
  }

  /**
   * A turn the model could not answer (down, timed out, a fault): recorded all the same, with the risk check on the
   * patient's words leading a plain sentence in their language. The model's history gets the patient's words, so
   * it reads them when it answers again; what failed is in the log and the trace.
   */
  function unanswered(state: ConsultState, { text, attachmentId, clientMessageId }: ConsultInput, error: unknown, traceId: string) {
    const asked = { role: 'user' as const, content: text, attachmentId, clientMessageId, at: new Date().toISOString() };
    const said = [...state.turns.filter((t) => t.role === 'user').map((t) => t.content), text];
    const notice: PatientNotice = ClinAgentError.isInstance(error) && error.code.startsWith('LLM_') ? 'model_unavailable' : 'fault';
    const judged = compose(state, { action: 'stopped', response: patientNotice(notice, patientLanguage(said)), quickOptions: [] }, traceId, said);
    const messages = [...state.messages, { role: 'user' as const, content: modelMessageOf(state, text, attachmentId) }, { role: 'assistant' as const, content: JSON.stringify({ action: 'respond', response: judged.reply.response }) }];
    return done({ ...state, messages, toolResults: [] }, asked, judged, { action: 'stopped', riskLevel: judged.risk.risk_level, error: ClinAgentError.isInstance(error) ? error.code : errorMessage(error).slice(0, 200) });
  }

  function done(state: ConsultState, asked: ConsultState['turns'][number], { reply, risk }: Judged, detail: unknown) {
    const answered = { role: 'assistant' as const, content: reply.response, quickOptions: reply.quickOptions, at: new Date().toISOString() };
    return {
      state: { ...state, risk, currentResponse: reply.response, quickOptions: reply.quickOptions, turns: [...state.turns, asked, answered], lastReply: reply },
      type: 'message',
      outcome: reply.action,
      detail,
    };
  }

  /**
   * Safety above the model: the risk check runs on what the patient said (every message, not only what the model
   * chose to record) and on the medical context; the level's advice leads the answer in the patient's language and
   * the model's words that contradict it are left out (risk/level-guidance.ts), whatever the model decided.
   */
  function compose(state: ConsultState, answer: { action: ConsultReply['action']; response: string; quickOptions: string[] }, traceId: string, said: string[]): Judged {
    // Contexts saved before the shape was enforced are read through it too.
    const context = normalizeMedicalContext(state.medicalContext);
    const language = patientLanguage(said);
    const assessed = riskOf(context, said);
    // The advice the banner shows is the one the answer leads with, in the same words.
    const risk = { ...assessed, advice: LEVEL_GUIDANCE[assessed.risk_level].advice[language] };
    const response = leadWithGuidance(answer.response, risk.risk_level, language);
    return { reply: { response, quickOptions: answer.quickOptions, action: answer.action, medicalContext: context, riskLevel: risk.risk_level, redFlags: risk.red_flags, traceId }, risk };
  }

  /**
   * What the dossier is built from: the consult's recorded tool answers (drugs offered, image findings), its risk
   * assessment, the diagnosis as the patient was shown it, and the exclusions read from its record and the
   * patient's words; not the model's retelling of them.
   */
  function snapshotOf(state: ConsultState, said = patientWordsOf(state)) {
    const recorded = recordedFindings(state.toolOutputs);
    // Consults diagnosed before the diagnosis was kept on its own fall back to their last reply.
    const diagnosis = state.diagnosis ?? (state.status === 'diagnosed' ? { summary: state.currentResponse, readyReason: stringOf(state.decision?.ready_reason) || undefined } : undefined);
    return {
      title: state.title,
      medicalContext: state.medicalContext,
      risk: state.risk,
      turns: state.turns.map((t) => ({ role: t.role, content: t.content })),
      diagnosis: diagnosis && { summary: diagnosis.summary, ready_reason: diagnosis.readyReason },
      medications: recorded.medications,
      imageFindings: recorded.imageFindings,
      exclusions: patientExclusions(state.medicalContext, said),
    };
  }

  async function loadAttachment(runId: string, id: string | undefined): Promise<{ bytes: Buffer; mimeType: string } | undefined> {
    if (!id || !/^[0-9a-f-]{36}$/i.test(id)) return undefined;
    const [row] = await deps.db.select().from(consultAttachments).where(and(eq(consultAttachments.id, id), eq(consultAttachments.runId, runId))).limit(1);
    return row ? { bytes: row.data, mimeType: row.mimeType } : undefined;
  }

  /** Checks the image by its bytes and keeps it beside the consult; its id is what the model is told. */
  async function storeImage(run: ConversationRun, actor: User, bytes: Buffer): Promise<ConsultState['attachments'][number]> {
    const { mimeType } = checkImage(bytes, deps.maxImageBytes);
    const [row] = await deps.db
      .insert(consultAttachments)
      .values({ runId: run.id, userId: actor.id, mimeType, sizeBytes: bytes.length, sha256: sha256Of(bytes), data: bytes })
      .returning({ id: consultAttachments.id, createdAt: consultAttachments.createdAt });
    return { id: row!.id, mimeType, sizeBytes: bytes.length, createdAt: row!.createdAt.toISOString() };
  }

  /**
   * What became of an earlier attempt of a message with this clientMessageId: its reply when it was answered; the
   * reply made now (or by the worker that has it) when it was taken but not answered, say by a process that died;
   * undefined when it was never taken, or taken and given up (its stream closed): the message is to be taken.
   */
  async function earlierAttempt(run: ConversationRun, resend: { id: string; fingerprint: string }, stream: { onEvent?: AgentEventSink; signal?: AbortSignal }): Promise<ConsultReply | undefined> {
    const earlier = await clientMessages.get(run.id, resend.id);
    if (!earlier) return undefined;
    if (earlier.fingerprint !== resend.fingerprint) throw reusedIdError(resend.id);
    if (earlier.reply) return earlier.reply as unknown as ConsultReply;
    let current = run;
    const isBeingAnswered = (current.status === 'RUNNING' || current.status === 'PENDING') && takenInputOf(current)?.clientMessageId === resend.id;
    if (isBeingAnswered) {
      // Answered here when no live worker has it (its process died), else waited for; either way made once.
      current = (await runs.advance(run.id, stream.onEvent, stream.signal)) ?? (await runs.waitForStep(run.id, { signal: stream.signal }));
    }
    const state = runs.stateOf(current);
    const answered = answeredTurn(state, resend.id);
    if (answered?.isLatest && state.lastReply) {
      await clientMessages.keep(run.id, resend.id, state.lastReply);
      return state.lastReply;
    }
    if (answered) throw new ClinAgentError('CONFLICT_STATE', 'This message was answered already, and the consult has gone on since; reload the consult to read its reply.', { field: 'clientMessageId', reason: 'client_message_answered' });
    // Given up by the one who sent it (the stream closed): taken again below. Any other failure is reported as take does.
    if (isBeingAnswered && state.lastError && state.lastError.code !== 'CANCELLED') throw new ClinAgentError(state.lastError.code as never, state.lastError.message);
    return undefined;
  }

  return {
    runs,
    async start(actor: User, request: { title?: string }): Promise<{ sessionId: string }> {
      const title = request.title?.trim() || `Skin consult ${new Date().toISOString().slice(0, 10)}`;
      const conversation = await deps.conversations.start({ actor, scenarioId: CONSULT_AGENT_ID, title });
      const state: ConsultState = { title, status: 'open', messages: [], medicalContext: {}, toolResults: [], currentResponse: '', quickOptions: [], attachments: [], risk: INITIAL_RISK, tokensUsed: 0, turns: [], traceIds: [], updatedAt: new Date().toISOString() };
      await runs.create(actor, { agentId: CONSULT_AGENT_ID, conversationId: conversation.id, state });
      return { sessionId: conversation.id };
    },
    async get(actor: User, sessionId: string): Promise<{ run: ConversationRun; state: ConsultState; dossier: { dossierId: string; createdAt: string } | null }> {
      const run = await runs.owned(CONSULT_AGENT_ID, sessionId, actor);
      const latest = await dossiers.latest(run.id);
      return { run, state: runs.stateOf(run), dossier: latest ? { dossierId: latest.dossierId, createdAt: latest.createdAt.toISOString() } : null };
    },
    async list(actor: User) {
      return (await runs.list(CONSULT_AGENT_ID, actor)).filter((run) => run.conversationId).map((run) => ({ sessionId: run.conversationId!, state: runs.stateOf(run), updatedAt: run.updatedAt }));
    },
    /**
     * One patient message, with an optional image (checked by its bytes, kept with the consult). With a
     * clientMessageId, a message already taken is not taken again: its reply is sent again, or made once.
     */
    async message(actor: User, sessionId: string, message: string, options: { image?: IncomingImage; clientMessageId?: string; onEvent?: AgentEventSink; signal?: AbortSignal } = {}): Promise<ConsultReply> {
      deps.llm.assertConfigured();
      assertWriterRole(actor);
      let run = await runs.owned(CONSULT_AGENT_ID, sessionId, actor);
      // The patient's phone number, ID number, e-mail, address or stated name is no clinical fact: it is replaced
      // before the message is stored, traced or sent to the model. The risk and drug checks read the rest.
      const text = redactIdentifierText(message);
      const image = options.image && imageBytesOf(options.image);
      const resend = options.clientMessageId ? { id: options.clientMessageId, fingerprint: messageFingerprint(text, image && sha256Of(image)) } : undefined;
      if (resend) {
        const earlier = await earlierAttempt(run, resend, options);
        if (earlier) return earlier;
      }
      try {
        // A message taken before and given up (its stream closed) had its image stored then: the resend uses it
        // rather than listing the same image twice. Its id row exists only once that attempt's take committed,
        // after the image was stored and listed, and its fingerprint matched, so the bytes are the same.
        let attachmentId = image && resend && (await clientMessages.get(run.id, resend.id)) ? await clientMessages.storedImage(run.id, sha256Of(image)) : undefined;
        if (image && !attachmentId) {
          if (run.status !== 'SUSPENDED') throw new ClinAgentError('CONFLICT_STATE', 'The previous message of this consult is still being answered; wait for its answer, then send this again.', { sessionId });
          const stored = await storeImage(run, actor, image);
          attachmentId = stored.id;
          const state = runs.stateOf(run);
          run = await runs.saveWaiting(run, { ...state, attachments: [...state.attachments, stored], updatedAt: new Date().toISOString() }, actor, { action: 'image_uploaded', newValue: { attachmentId: stored.id, mimeType: stored.mimeType, sizeBytes: stored.sizeBytes } });
        }
        const saved = await runs.take(run, actor, { kind: 'answer', input: { text, attachmentId, clientMessageId: resend?.id } }, options);
        const reply = runs.stateOf(saved).lastReply;
        if (!reply) throw new ClinAgentError('INTERNAL', 'The consult saved no reply for this message; reload it.');
        // Not kept (the database went away just now): the consult's next message keeps it, and a resend reads it from the consult.
        if (resend) await clientMessages.keep(run.id, resend.id, reply).catch((error) => deps.logger.warn({ runId: run.id, err: errorMessage(error) }, 'consult: the reply of a client message id could not be kept'));
        return reply;
      } catch (error) {
        // The same message sent twice at once: the one that lost the race gets the other's reply.
        if (!resend || !ClinAgentError.isInstance(error) || error.code !== 'CONFLICT_STATE' || error.details.reason === 'client_message_id_reused') throw error;
        const earlier = await earlierAttempt(await runs.owned(CONSULT_AGENT_ID, sessionId, actor), resend, options);
        if (earlier) return earlier;
        throw error;
      }
    },
    /** The latest record of the consult, made now from its state when it has none newer than its last message. */
    async dossier(actor: User, sessionId: string) {
      const run = await runs.owned(CONSULT_AGENT_ID, sessionId, actor);
      const state = runs.stateOf(run);
      const latest = await dossiers.latest(run.id);
      if (latest && latest.createdAt.getTime() >= Date.parse(state.updatedAt)) return latest;
      const content = buildDossier({ ...snapshotOf(state), createdAt: new Date() });
      const saved = await dossiers.save({ runId: run.id, userId: actor.id, content });
      return { ...saved, content };
    },
    async attachment(actor: User, sessionId: string, attachmentId: string): Promise<{ bytes: Buffer; mimeType: string }> {
      const run = await runs.owned(CONSULT_AGENT_ID, sessionId, actor);
      const found = await loadAttachment(run.id, attachmentId);
      if (!found) throw new ClinAgentError('NOT_FOUND', `Attachment "${attachmentId}" is not part of this consult.`, { attachmentId });
      return found;
    },
    tokenBudget: deps.tokenBudget,
    maxImageBytes: deps.maxImageBytes,
  };
}

/** The deterministic risk check on the patient's words and what the medical context records. */
function riskOf(context: MedicalContext, said: string[]) {
  return assessRisk([...(context.symptoms ?? []), ...said], context.patient_info ?? {}, { duration: context.duration, location: context.location });
}

/** The message the consult's run has taken and is answering, as it was stored. */
function takenInputOf(run: ConversationRun): ConsultInput | undefined {
  const review = run.review as RunReview | null;
  const parsed = review?.decision === 'answer' ? ConsultInput.safeParse(review.input) : undefined;
  return parsed?.success ? parsed.data : undefined;
}

const imageBytesOf = (image: IncomingImage): Buffer => ('bytes' in image ? image.bytes : decodeImageBase64(image.base64));
const sha256Of = (bytes: Buffer): string => createHash('sha256').update(bytes).digest('hex');

/** A consult's every step is a patient message: the run waits for an answer, never for a confirmation. */
function messageOf(given: ConversationInput<ConsultInput>): ConsultInput {
  return given.kind === 'answer' ? given.input : { text: '' };
}

/** The patient's message as the model reads it: images by their place in the consult ("attachment:2"), short and nothing to mistype. */
function modelMessageOf(state: ConsultState, text: string, attachmentId: string | undefined): string {
  const index = state.attachments.findIndex((a) => a.id === attachmentId);
  return index >= 0 ? `${text}\n\n${dataBlock('attachments', [`attachment:${index + 1} (${state.attachments[index]!.mimeType}, uploaded with this message)`])}` : text;
}

/** `attachment:2` (its place in the consult, from 1) to the stored attachment's id. */
function attachmentIdOf(state: ConsultState, ref: string): string | undefined {
  const match = /^attachment:(\d+)$/.exec(ref.trim());
  return match ? state.attachments[Number(match[1]) - 1]?.id : undefined;
}

const stringOf = (value: unknown): string => (typeof value === 'string' ? value.trim() : '');
const optionsOf = (value: unknown): string[] => (Array.isArray(value) ? value.filter((o): o is string => typeof o === 'string' && o.trim().length > 0).slice(0, 8) : []);

/**
 * A model that ignores its token limit can write 200 kB into `response`: nobody reads that, and it would be stored and
 * sent back as history every turn. Such an answer is not shown; the patient reads the plain notice instead (the risk
 * advice still leads it), and the trace keeps what the model wrote.
 */
function showable(response: string, said: string[]): string {
  return response.length > MAX_ANSWER_CHARS ? patientNotice('unusable', patientLanguage(said)) : response;
}

/** Why the loop stopped, as the patient is told it (patient-notices.ts); a string, as the loop's reasons grow. */
function stoppedNotice(reason: string): PatientNotice {
  switch (reason) {
    case 'token_budget': return 'message_budget';
    case 'max_rounds': return 'max_rounds';
    // The patient already described the problem: asking them to again reads as not listening.
    case 'error_breaker': return 'tools_failed';
    case 'truncated': return 'answer_cut_off';
    default: return 'unusable';
  }
}

export type ConsultService = ReturnType<typeof createConsultService>;
