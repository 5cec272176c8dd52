import { z } from 'zod';
import { Uuid } from '../../contract/index.js';
import type { User } from '../../core/auth/users.js';
import type { StagedAgentService } from '../../runtime/staged/staged-agent-service.js';
import { PROTOCOL_AGENT_ID, protocolContextOf } from '../../agents/protocol/protocol-agent.js';
import { spiritCoverage } from '../../agents/protocol/spirit/index.js';
import type { McpTool } from './mcp-tool.js';

// Built once: the registry converts each schema for tools/list once, whoever asks.
const NO_ARGUMENTS = z.strictObject({});
const SPIRIT_ARGUMENTS = z.strictObject({ conversationId: Uuid.describe('the protocol, as list_protocols names it') });

/**
 * The caller's own Protocol Agent drafts: which there are, and the SPIRIT 2025 checklist of one. A protocol is its
 * owner's alone (the staged-agent service answers NOT_FOUND to anyone else, an admin or a project member included),
 * as in GET /api/aia/protocol-agent/context/:conversationId, whose `spirit` this is.
 */
export function protocolTools(staged: Pick<StagedAgentService, 'list' | 'get'>, actor: User): McpTool[] {
  return [
    {
      name: 'list_protocols',
      description: 'Your Protocol Agent drafts, most recently active first: conversation id, title, current and completed stages.',
      schema: NO_ARGUMENTS,
      run: async () => ({
        protocols: (await staged.list(actor, PROTOCOL_AGENT_ID)).map((p) => ({ conversationId: p.conversationId, title: p.state.title, currentStage: p.state.currentStage, completedStages: p.state.completedStages, updatedAt: p.updatedAt.toISOString() })),
      }),
    },
    {
      name: 'spirit_checklist',
      description: 'The SPIRIT 2025 checklist of one of your protocols: which items the draft already answers (and from which fields), and which are still open.',
      schema: SPIRIT_ARGUMENTS,
      run: async ({ conversationId }: { conversationId: string }) => {
        const view = await staged.get(actor, PROTOCOL_AGENT_ID, conversationId);
        return { conversationId, title: view.state.title, spirit: spiritCoverage(protocolContextOf(view)) };
      },
    },
  ];
}
