import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { z } from 'zod';

/**
 * A stdio MCP server for tests of the MCP client, started by ClinAgent as a configured `command`
 * (process.execPath --import tsx this file). `count_words` answers with the words of its text counted, and says
 * which secret it was given in MCP_TEST_GREETING (set from the MCP_SECRET_ variable its configuration names);
 * `crash` ends the process mid-call.
 */
const server = new McpServer({ name: 'textkit-test', version: '1.0.0' });
server.registerTool('count_words', {
  description: 'Counts the words of a text.',
  inputSchema: { text: z.string().min(1) },
}, async ({ text }) => ({
  content: [{ type: 'text', text: `${text.trim().split(/\s+/).length} words (${process.env.MCP_TEST_GREETING ?? 'no greeting'}; planted variable ${process.env.CLINAGENT_TEST_PLANTED === undefined ? 'absent' : 'present'})` }],
}));
// A server process that dies in the middle of a call, as a crashing one would.
server.registerTool('crash', { description: 'Ends the server process.', inputSchema: {} }, async () => process.exit(3));
await server.connect(new StdioServerTransport());
