import { runAgent } from '../run-agent.js';
import type { AgentEngine } from './engine.js';

/** The one agent loop with retrieval, tools and structured output (seed 004 section 4). */
export const builtinEngine: AgentEngine = { type: 'builtin', run: runAgent };
