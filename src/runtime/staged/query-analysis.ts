import type { StageConfig } from './config.js';
import type { IntentType, QueryAnalysisResult } from './types.js';

/**
 * Query analysis (seed 001 section 2.2), deterministic: the intents the pipeline acts on differently (complete the
 * stage, open a tool, answer a question) are recognised from the words, in English and Chinese. The seed asks a
 * model for this; a second model call per message would double the cost and latency of every turn for intents
 * the stage conversation handles anyway, and a keyword match is auditable. The result is a span of the trace.
 */
const PATTERNS: Array<[IntentType, RegExp]> = [
  ['confirm_complete', /\b(next stage|move on|complete (the|this) stage|this stage is (done|complete)|let'?s continue to)\b|下一(个)?阶段|进入下一|完成(本|这个|当前)?阶段|本阶段完成/i],
  ['request_tool', /\b(calculat(e|or)|compute|power analysis)\b|计算器|计算样本|样本量计算/i],
  ['request_change', /\b(change|update|correct|replace|instead)\b|修改|改为|改成|更正|替换/i],
  ['chitchat', /^\s*(hi|hello|hey|thanks|thank you|ok|okay|你好|您好|谢谢|好的)[\s!.。！]*$/i],
  ['ask_question', /[?？]\s*$|^\s*(what|how|why|which|should|can|could|is|are|does|do)\b|什么|怎么|为什么|如何|是否|吗[\s。？?]*$/i],
];

export function analyzeQuery(message: string, stage: StageConfig): QueryAnalysisResult {
  const text = message.trim();
  const found = PATTERNS.find(([, pattern]) => pattern.test(text));
  const primary: IntentType = found ? found[0] : text.length < 2 ? 'unclear' : 'provide_info';
  // A tool the stage does not offer is a question about it, not a request the stage can serve.
  const intent: IntentType = primary === 'request_tool' && !stage.availableToolIds.length && !stage.actionCards.length ? 'ask_question' : primary;
  return { intent: { primary: intent, confidence: found ? 0.8 : 0.5 }, resolvedQuery: text, requiresClarification: intent === 'unclear' };
}
