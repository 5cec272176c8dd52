import type { PatientLanguage } from './patient-language.js';

/**
 * What the patient reads when the consult has no usable answer from the model: a plain sentence in their language
 * saying what they can do. What went wrong for the operator (status codes, settings to raise, endpoints) goes to
 * the log and the trace, never here. The risk advice still leads each of these (consult-service.ts `compose`).
 */
export type PatientNotice =
  | 'model_unavailable'
  | 'fault'
  | 'answer_cut_off'
  | 'tools_failed'
  | 'max_rounds'
  | 'message_budget'
  | 'consult_budget'
  | 'unusable';

const NOTICES: Record<PatientNotice, Record<PatientLanguage, string>> = {
  model_unavailable: {
    en: 'I cannot answer right now because the consultation service is not responding. Please send your message again in a few minutes.',
    zh: '咨询服务暂时没有响应，我现在无法回答。请过几分钟再发送一次您的消息。',
  },
  fault: {
    en: 'Something went wrong on our side, so I have no answer to this message yet. Please send it again in a moment.',
    zh: '我们这边出了问题，暂时无法回答这条消息。请稍后再发送一次。',
  },
  answer_cut_off: {
    en: 'My answer was cut off before it was complete. Please send your message again.',
    zh: '我的回答没有完整生成。请再发送一次您的消息。',
  },
  tools_failed: {
    en: 'Something went wrong on my side while I was looking into this, so I have no answer yet. Please send your message again in a moment.',
    zh: '我在查询资料时出了问题，暂时没有答案。请稍后再发送一次您的消息。',
  },
  max_rounds: {
    en: 'I could not reach an answer for this message in the steps allowed. Please send it again, or add one more detail.',
    zh: '这条消息我没能在允许的步骤内得出答案。请再发送一次，或补充一点细节。',
  },
  message_budget: {
    en: 'I have reached the limit of what I can work through for one message. Please answer my last question briefly, or start a new consult.',
    zh: '这条消息已达到我能处理的上限。请简短回答我上一个问题，或开始新的咨询。',
  },
  consult_budget: {
    en: 'This consult has used its budget of {budget} tokens, so it cannot continue. Download the consult record (dossier), or start a new consult.',
    zh: '本次咨询已用完预算（{budget} 个 token），无法继续。您可以下载咨询记录，或开始新的咨询。',
  },
  unusable: {
    en: 'I could not produce a usable answer this time. Please send your message again.',
    zh: '这次我没能给出可用的回答。请再发送一次您的消息。',
  },
};

export function patientNotice(notice: PatientNotice, language: PatientLanguage, values: { budget?: number } = {}): string {
  return NOTICES[notice][language].replace('{budget}', String(values.budget ?? ''));
}
