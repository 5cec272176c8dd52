import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { z } from 'zod';

/**
 * A real MCP server (the official SDK's McpServer over Streamable HTTP, stateless) on loopback, for tests of the
 * MCP client: a lab-data service that wants a bearer token. `slow_lookup` answers only once the test releases
 * it (or the server closes), so a timeout is proven without a sleep. `calls` records each tool call it received.
 */
export interface McpTestServer {
  url: string;
  calls: Array<{ tool: string; args: unknown }>;
  /** Requests that reached the HTTP endpoint (any method), so a test can tell the server was never called. */
  requests: number;
  /** Lets every held slow_lookup answer. */
  releaseSlow(): void;
  close(): Promise<void>;
}

export const MCP_TEST_TOKEN = 'mcp-test-bearer-token-0123456789abcdef';

export async function startMcpTestServer(options: { token?: string } = {}): Promise<McpTestServer> {
  const token = options.token ?? MCP_TEST_TOKEN;
  const calls: McpTestServer['calls'] = [];
  let releaseHeld: () => void = () => undefined;
  let held = new Promise<void>((resolve) => (releaseHeld = resolve));

  function mcpServer(): McpServer {
    const server = new McpServer({ name: 'labdata-test', version: '1.0.0' });
    server.registerTool('lookup_visit', {
      description: 'The visit schedule status of a visit number.',
      inputSchema: { visit: z.number().int().min(1).max(20) },
    }, async ({ visit }) => {
      calls.push({ tool: 'lookup_visit', args: { visit } });
      return { content: [{ type: 'text', text: `Visit ${visit}: week ${visit * 4}, labs complete.` }] };
    });
    server.registerTool('visit_counts', {
      description: 'How many visits are complete, as structured data.',
      inputSchema: { site: z.enum(['north', 'south']) },
      outputSchema: { site: z.string(), complete: z.number() },
    }, async ({ site }) => {
      calls.push({ tool: 'visit_counts', args: { site } });
      const structuredContent = { site, complete: site === 'north' ? 12 : 7 };
      return { content: [{ type: 'text', text: JSON.stringify(structuredContent) }], structuredContent };
    });
    server.registerTool('long_report', { description: 'A very long text.', inputSchema: {} }, async () => {
      calls.push({ tool: 'long_report', args: {} });
      return { content: [{ type: 'text', text: 'x'.repeat(50_000) }] };
    });
    server.registerTool('failing_lookup', { description: 'Always fails.', inputSchema: {} }, async () => {
      calls.push({ tool: 'failing_lookup', args: {} });
      return { content: [{ type: 'text', text: 'the lab system is in maintenance' }], isError: true };
    });
    server.registerTool('slow_lookup', { description: 'Answers when released.', inputSchema: {} }, async () => {
      calls.push({ tool: 'slow_lookup', args: {} });
      await held;
      return { content: [{ type: 'text', text: 'late' }] };
    });
    server.registerTool('delete_visit', { description: 'Deletes a visit.', inputSchema: { visit: z.number() } }, async ({ visit }) => {
      calls.push({ tool: 'delete_visit', args: { visit } });
      return { content: [{ type: 'text', text: 'deleted' }] };
    });
    return server;
  }

  const state = { requests: 0 };
  const httpServer = http.createServer(async (request, response) => {
    state.requests++;
    if (request.headers.authorization !== `Bearer ${token}`) {
      response.writeHead(401, { 'content-type': 'application/json' }).end(JSON.stringify({ error: 'invalid token' }));
      return;
    }
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const body = chunks.length ? JSON.parse(Buffer.concat(chunks).toString('utf8')) : undefined;
    const server = mcpServer();
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    response.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(request, response, body);
  });
  await new Promise<void>((resolve) => httpServer.listen(0, '127.0.0.1', resolve));
  const port = (httpServer.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    calls,
    get requests() {
      return state.requests;
    },
    releaseSlow() {
      releaseHeld();
      held = new Promise<void>((resolve) => (releaseHeld = resolve));
    },
    async close() {
      releaseHeld();
      httpServer.closeAllConnections();
      await new Promise((resolve) => httpServer.close(resolve));
    },
  };
}
