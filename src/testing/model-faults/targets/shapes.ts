import type { RecordedRequest, ScriptedStep } from '../../scripted-model.js';

/** Native function calling, as the OpenAI API sends it. */
export const nativeToolCall = (name: string, args: Record<string, unknown>): ScriptedStep => ({ toolCalls: [{ name, arguments: args }] });

export const reply = (text: string): ScriptedStep => ({ reply: text });

/** The request asked for a JSON object (response_format): a structured call such as routing. */
export const asksForJson = (request: RecordedRequest): boolean => Boolean(request.body?.response_format);

/** Every message of the request as one string, to tell a target's calls apart by what they carry. */
export const promptOf = (request: RecordedRequest): string => JSON.stringify(request.body?.messages ?? []);
