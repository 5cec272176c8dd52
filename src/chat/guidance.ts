import type { Intent } from './routing/route-intent.js';

/**
 * Answers the assistant gives without a model: the guidance for requests it must not carry out from chat, and
 * the question back when it cannot tell what the user wants. They are fixed text so they are always right.
 */
export type Language = 'zh' | 'en';

export function writeRequestGuidance(projectId: string, language: Language): string {
  const queries = `/trial/${encodeURIComponent(projectId)}/queries`;
  return language === 'zh'
    ? `我只能查询数据，不能在对话中修改、录入或删除试验数据。请走正式的质控流程：数据更正在 EDC（REDCap）中完成后重新导入或同步；质疑的回复、关闭请在质疑页面（${queries}）处理；需要重新核查时可以让我"对某受试者做一次质控"。`
    : `I can only read trial data; I never change, enter or delete it from chat. Use the QC flow instead: correct the data in the EDC (REDCap) and re-import or sync it; answer or close queries on the queries page (${queries}); and ask me to "run QC on record …" to re-check it afterwards.`;
}

export function unclearAnswer(language: Language): string {
  return language === 'zh'
    ? '我没太明白您想做什么。您可以问我试验数据（如"P003 的 ECOG 是多少？"）、方案内容、项目统计、访视窗，或者让我对某些受试者做质控、记住一条偏好。'
    : 'I am not sure what you need. You can ask about trial data ("what is P003\'s ECOG?"), the protocol, project statistics or visit windows, ask me to run QC on some records, or tell me a preference to remember.';
}

export function forbiddenAnswer(what: 'qc' | 'memory', role: string, language: Language): string {
  if (language === 'zh') return what === 'qc' ? `您的角色（${role}）只能查看，不能发起质控。请联系项目 PI 或协调员。` : `您的角色（${role}）只能查看，不能修改项目记忆。请联系项目 PI 或协调员。`;
  return what === 'qc' ? `Your role (${role}) can only read, so you cannot start QC. Ask the project's PI or a coordinator.` : `Your role (${role}) can only read, so you cannot change the project's memory. Ask the project's PI or a coordinator.`;
}

export function rememberedAnswer(fact: string, changed: boolean, language: Language): string {
  if (language === 'zh') return changed ? `好的，我记住了：${fact}` : `这一条我已经记着了：${fact}`;
  return changed ? `Noted, I will remember: ${fact}` : `I already have that in memory: ${fact}`;
}

export function memoryFullAnswer(message: string, language: Language): string {
  return language === 'zh'
    ? `项目记忆已满，这条没有记下。请管理员在记忆编辑器里删减后再试。（${message}）`
    : `The project's memory is full, so this was not stored. Ask an admin to shorten it in the memory editor, then try again. (${message})`;
}

export function qcStartedAnswer(run: { id: string; skill: string; records: number }, language: Language): string {
  return language === 'zh'
    ? `已开始质控（规则集 ${run.skill}，${run.records} 个受试者），运行编号 ${run.id}。结果会出现在质控运行页面，发现的问题会生成质疑。`
    : `QC started (skill ${run.skill}, ${run.records} record(s)), run ${run.id}. Results appear on the QC runs page; problems found become queries.`;
}

/**
 * Hot memory refused the line (not the person's own words, too long, no section): the reasons name fields of the
 * write API and stay in the trace; the person is told what works instead.
 */
export function notRememberedAnswer(language: Language): string {
  return language === 'zh'
    ? '没有记下：我只能记住您在消息里亲口说的一句话（一行、500 字以内）。请用自己的话再说一遍要记住什么（如"记住：以后汇报只要结论"），或请有编辑权限的成员在记忆编辑器中添加。'
    : 'Nothing was remembered: I can only remember your own words from your message, as one short line (under 500 characters). Say what to remember in your own words (e.g. "remember: reports only need the conclusion"), or a writer adds it in the memory editor.';
}

/** The model answered with data instead of words: nothing of it is shown. */
export function unreadableAnswer(language: Language): string {
  return language === 'zh'
    ? '模型的回答无法直接展示（它返回的是数据结构而不是文字）。请换一种问法再试，或联系管理员查看记录。'
    : 'The model answered with data instead of words, so there is nothing I can show you. Please ask again in other words; an administrator can see what happened in the trace.';
}

/** Something of ours broke (not the model, not the request): the detail is for the log, the trace id for the admin. */
export function internalErrorAnswer(traceId: string, language: Language): string {
  return language === 'zh' ? `系统内部出错，这一项没有完成。管理员可以在记录 ${traceId} 中查看原因。` : `This part could not be done because of an internal error. An administrator can look it up in trace ${traceId}.`;
}

export function failedAnswer(message: string, language: Language): string {
  return language === 'zh' ? `这一项没有完成：${message}` : `This part could not be done: ${message}`;
}

const INTENT_LABELS: Record<Language, Record<Intent['type'], string>> = {
  zh: { qc_task: '质控', data_question: '数据查询', history_question: '历史回顾', memory_instruction: '记忆', write_request: '修改请求', chit_chat: '对话', unclear: '待澄清' },
  en: { qc_task: 'QC', data_question: 'Data', history_question: 'History', memory_instruction: 'Memory', write_request: 'Change request', chit_chat: 'Chat', unclear: 'Unclear' },
};

/** One intent: its answer as it is. Several: numbered in the order handled (seed 000 V2.9, "统一回复"). */
export function composeAnswer(parts: ReadonlyArray<{ intent: Intent; answer: string }>, language: Language): string {
  if (parts.length === 1) return parts[0]!.answer;
  return parts.map((part, i) => `${i + 1}. [${INTENT_LABELS[language][part.intent.type]}] ${part.answer}`).join('\n\n');
}
