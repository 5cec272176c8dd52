/**
 * The keyword tables of the rule-based router (route-by-rules.ts), Chinese and English side by side. They are
 * what the assistant falls back on when no model answers, so they favour the common phrasings of PIs and
 * coordinators over completeness: a message they cannot place is 'unclear', and the assistant asks back.
 *
 * Every pattern is linear (no nested quantifiers), so a long or hostile message cannot stall matching.
 */

/**
 * Where a message splits into several intents (seed 000 V2.9 "意图拆解"). Sentence ends keep their mark in the
 * part before them; connectors are dropped. 再, 另外, 同时, 还有 and 接着 only count after a pause (a comma, a
 * space), since inside a clause they are ordinary words ("再次", "另外一个受试者").
 */
export const SPLITTERS: readonly RegExp[] = [
  /(?<=[。！？!?])\s*/g,
  /(?<=\.)\s+(?=\S)/g,
  /\s*[；;]\s*/g,
  /\s*(?:然后|并且)\s*[，,]?\s*/g,
  /(?<=[，,、\s])(?:再|另外|同时|还有|接着)(?![次见说])\s*[，,]?\s*/g,
  /\s+(?:and then|then|also)\s+/gi,
];

/** Connector words left at the start of a part ("Also, ...", "另外，..."); ignored when matching. */
export const LEADING_CONNECTOR = /^(?:(?:and then|and|also|then|plus|first|firstly|然后|并且|另外|同时|再|还有|接着|先|首先)\s*[，,:：]?\s*)+/i;

/** A part that is only punctuation or a connector has nothing of its own to classify. */
export const NOTHING_LEFT = /^[\s\p{P}\p{S}]*$/u;

export const MEMORY_TRIGGERS: readonly RegExp[] = [
  // 记住 / 请记得 at the start, or followed by a colon anywhere; "你记得吗" is a question, not an instruction.
  /^(?:请|麻烦|务必|一定要)?\s*(?:记住|请记得|记得|记一下|记下)(?!吗|不记得)/,
  /(?:记住|请记得|记下来)\s*[:：]/,
  /^(?:请|麻烦)?\s*(?:以后|今后|从现在起|从现在开始|往后|此后|今后都)/,
  /^(?:please\s+)?(?:remember|note|keep in mind)\b(?!\s+(?:when|why|what|how|if|whether|who|where)\b)/i,
  /^(?:please\s+)?(?:from now on|going forward|in (?:the )?future|henceforth|always|never)\b(?!\s+mind\b)/i,
];

/** Trigger words removed from the start of a fact ("记住：以后汇报只要结论" -> "汇报只要结论"); always/never stay, they are the fact. */
export const FACT_PREFIXES: readonly RegExp[] = [
  /^(?:请|麻烦|务必|一定要)?\s*(?:记住|请记得|记得|记一下|记下来|记下)\s*[:：,，]?\s*/,
  /^(?:请|麻烦)?\s*(?:以后都|以后|今后都|今后|从现在起|从现在开始|往后|此后)\s*[:：,，]?\s*/,
  /^(?:please\s+)?(?:remember|note|keep in mind)(?:\s+that)?\s*[:,]?\s*/i,
  /^(?:please\s+)?(?:from now on|going forward|in (?:the )?future|henceforth)\s*[:,]?\s*/i,
];

export const PROHIBITION = /不要|不能|不许|不准|禁止|严禁|不得|切勿|别再|别|勿|\b(?:never|don't|do not|must not|mustn't|no longer|avoid|stop)\b/i;
export const STATE = /目前|当前|现在|已经|已|处于|阶段|暂停|正在|\b(?:currently|now|is in|are in|has been|have been|paused|on hold|stage|phase)\b/i;

/** Questions about the assistant itself; they outrank data words ("你能做什么?" is not a data question). */
export const ABOUT_ASSISTANT = /你是谁|你叫什么|你能做什么|你会做什么|你可以做什么|你能干什么|你有什么功能|介绍一下你自己|你是什么|\b(?:who are you|what can you do|what are you|how do you work|what is your name|what's your name|introduce yourself|how are you)\b/i;

export const WRITE_REQUEST: readonly RegExp[] = [
  /把.{0,40}?(?:改成|改为|改到|更正为|更新为|删除|删掉|删了|关闭|关掉|录入|填上|填成|设为|设置为|标记为)/,
  /改成|改为|更正为|更新为|设置为|修改为/,
  /^(?:请|帮我|麻烦|请帮我|帮忙|麻烦你|你帮我)?\s*(?:修改|更改|更正|录入|填写|填入|删除|删掉|关闭|关掉|新增|添加|提交|撤销|作废|重新打开|重开)/,
  /(?:我要|我想|需要|要)(?:修改|更改|录入|删除|关闭|更正|填写|新增|添加)/,
  /^(?:please\s+|pls\s+|can you\s+|could you\s+|would you\s+|help me\s+|let's\s+|i (?:want|need|would like) to\s+)?(?:change|update|set|edit|modify|correct|fix|delete|remove|enter|input|fill in|add|close|reopen|resolve|void|overwrite|amend)\b/i,
  /\b(?:change|set|update|correct)\b.{1,60}?\bto\b/i,
];

/** Starting QC: an action word with QC, or QC done to something ("对 P003 做一次质控", "run QC on all records"). */
export const QC_ACTION: readonly RegExp[] = [
  /(?:做|跑|运行|执行|进行|开始|启动|发起|安排|来)(?:一次|一下|一遍|个)?\s*(?:质控|质量控制|核查|规则检查)/,
  /(?:质控|核查)(?:一下|一遍)/,
  /对.{0,30}?(?:质控|核查)/,
  /\b(?:run|do|perform|start|execute|launch|kick off|trigger|redo|rerun|re-run)\b.{0,40}?\b(?:qc|quality control|quality checks?|data checks?|checks|the rules|sop)\b/i,
  /^(?:please\s+)?qc\b/i,
  /\bcheck (?:all |the |every )?(?:records?|subjects?)\b/i,
];

export const QC_WORDS = /质控|质量控制|核查|规则检查|\b(?:qc|quality control|quality checks?|data checks?)\b/i;

/**
 * A question about QC (its results, its schedule) is a question, not a request to run it. A polite request
 * ("能帮我做一次质控吗?", "can you run QC on S003?") is not: 吗 and a question mark alone do not count.
 */
export const QC_QUESTION = /结果|怎么样|如何|多少|几个|哪些|有没有|什么时候|什么|发现|^(?:how|what|when|why|where|which|who|did|was|were|is|are|has|have)\b/i;

/** Any question form: QC words in a question without an action are about QC, not a request for it. */
export const QUESTION = /结果|怎么样|如何|多少|几个|哪些|有没有|什么时候|什么|吗|呢|？|\?/;

export const HISTORY = /之前|以前|此前|上次|上周|上个月|上月|上季度|上个季度|去年|前年|过去|当时|历史|回顾|复盘|趋势|曾经|讨论过|决定过|后来|\b(?:previously|in the past|last (?:week|month|quarter|year|time)|earlier this (?:year|month)|history|historical|trends?|retrospective|look(?:ing)? back|over the past|ago|why (?:did )?we|what did we decide|did we (?:ever )?(?:discuss|decide|agree)|back then)\b|\bhow did\b.{1,60}?\bgo\b/i;

export const DATA_QUESTION = /多少|几个|几例|几位|几名|是否|吗|呢|查|看看|看一下|统计|入组|访视|窗口|窗期|方案|质疑|未关闭|进度|数据|受试者|列出|哪些|什么|怎么|如何|情况|状态|有没有|不良事件|？|\?|\b(?:how many|how much|what|which|when|where|who|whether|show|list|give me|tell me|find|look up|count|stats?|statistics|enrol(?:l)?ed|enrol(?:l)?ment|visits?|window|protocol|queries|query|status|progress|records?|subjects?|patients?|sites?|ecog|adverse events?)\b/i;

/** Greetings and thanks: an intent only when the message holds nothing else. */
export const SMALL_TALK = /你好|您好|嗨|哈喽|谢谢|多谢|感谢|早上好|下午好|晚上好|早安|晚安|再见|拜拜|辛苦了|好的|收到|明白了|没事了|\b(?:hi|hello|hey|thanks|thank you|thx|good (?:morning|afternoon|evening)|bye|goodbye|cheers|ok|okay|great|got it)\b/i;

/**
 * Record ids as people write them: a prefixed id (P003, S-012, SUBJ0012; upper case, or one lower-case letter
 * as in "p003"), or a number after a word that names a record ("record 12", "受试者 3", "3 号受试者" is not
 * matched: ids follow their noun in trial speech). Two digits at least, so "V2", "Q3" or "S1 phase" are not ids.
 */
export const RECORD_IDS: readonly RegExp[] = [
  /\b(?:[A-Z]{1,4}|[a-z])-?\d{2,}\b/g,
  /\b(?:record|subject|patient|participant)s?\s*(?:id\s*)?#?\s*([A-Za-z]{0,4}-?\d+)\b/gi,
  /(?:受试者|患者|病例|记录|编号)\s*#?\s*([A-Za-z]{0,4}-?\d+)/g,
];
