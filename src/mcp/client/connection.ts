import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { ErrorCode, McpError, type CallToolResult, type Tool } from '@modelcontextprotocol/sdk/types.js';
import { ClinAgentError, errorMessage } from '../../core/errors.js';
import type { Logger } from '../../core/logger.js';
import { createGuardedFetch } from '../../core/net/guarded-fetch.js';
import type { SecretRegistry } from '../../core/secrets.js';
import type { McpServerConfig } from './servers-file.js';

/** One configured MCP server: connected on first use, reused by every call, connected again after it failed. */
export interface McpConnection {
  readonly server: string;
  listTools(): Promise<Tool[]>;
  callTool(tool: string, args: Record<string, unknown>): Promise<CallToolResult>;
  close(): Promise<void>;
}

export interface McpConnectionDeps {
  /** Where the secrets the file names are read, at each connect (so a rotated token is picked up on reconnect). */
  env: Readonly<Record<string, string | undefined>>;
  /** Every secret read is masked in logs and traces from then on. */
  secrets: Pick<SecretRegistry, 'add'>;
  /** MCP_ALLOWED_HOSTS: the guarded fetch lets these connect wherever they resolve, and refuses other non-public addresses. */
  allowedHosts: ReadonlyArray<string>;
  logger: Pick<Logger, 'debug'>;
  clientVersion: string;
}

export function createMcpConnection(config: McpServerConfig, deps: McpConnectionDeps): McpConnection {
  const name = config.name;
  const fetch = config.transport.type === 'http' ? createGuardedFetch({ allowedHosts: deps.allowedHosts, what: 'an MCP server host', setting: 'MCP_ALLOWED_HOSTS', code: 'EMCPHOSTREFUSED' }) : undefined;
  let closed = false;

  function secret(envName: string): string {
    const value = deps.env[envName]?.trim();
    if (!value) throw new ClinAgentError('CONFIG_MISSING', `${envName} is not set: MCP server "${name}" needs it (MCP_SERVERS_FILE names it). Set it on the server and restart.`, { field: envName, server: name });
    deps.secrets.add(value);
    return value;
  }

  function transport(): Transport {
    const t = config.transport;
    if (t.type === 'http') {
      const headers: Record<string, string> = Object.fromEntries(Object.entries(t.headersEnv).map(([header, envName]) => [header, secret(envName)]));
      if (t.bearerTokenEnv) headers.Authorization = `Bearer ${secret(t.bearerTokenEnv)}`;
      return new StreamableHTTPClientTransport(new URL(t.url), { fetch, requestInit: { headers } });
    }
    // The SDK starts the process with a short list of harmless variables (PATH, HOME...) plus these: never ours.
    const env = Object.fromEntries(Object.entries(t.env).map(([variable, envName]) => [variable, secret(envName)]));
    const stdio = new StdioClientTransport({ command: t.command, args: [...t.args], cwd: t.cwd, env, stderr: 'pipe' });
    // Its diagnostics, for an operator at debug level; never in an answer or a trace.
    stdio.stderr?.on('data', (chunk: Buffer) => deps.logger.debug({ mcpServer: name, stderr: chunk.toString('utf8').slice(0, 2000) }, 'MCP server stderr'));
    return stdio;
  }

  interface Live {
    client: Client;
    ready?: Promise<Client>;
  }
  let current: Live | undefined;

  async function open(live: Live): Promise<Client> {
    try {
      await live.client.connect(transport(), { timeout: config.timeoutMs });
      return live.client;
    } catch (error) {
      // A half-open connection (a started process, a slow server) is closed, and the next call starts afresh.
      if (current === live) current = undefined;
      await live.client.close().catch(() => undefined);
      throw error;
    }
  }

  function client(): Promise<Client> {
    if (closed) return Promise.reject(new ClinAgentError('CONFLICT_STATE', `MCP server "${name}": the connection is closed (ClinAgent is shutting down).`, { server: name }));
    if (!current) {
      const live: Live = { client: new Client({ name: 'clinagent', version: deps.clientVersion }) };
      // A server that exits or drops the connection: the next call connects again.
      live.client.onclose = () => {
        if (current === live) current = undefined;
      };
      current = live;
      // Assigned before open() runs to its first await: a secret that is unset fails it synchronously.
      const ready = open(live);
      live.ready = ready;
      return ready;
    }
    return current.ready!;
  }

  /**
   * Runs one request. A broken connection (a process that exited, a refused or dropped HTTP request) closes the
   * client, so the next request starts afresh. A timeout does not: the SDK has told the server the request is
   * cancelled, and closing would fail every other call in flight on the same connection.
   */
  async function request<T>(what: string, run: (c: Client) => Promise<T>): Promise<T> {
    let c: Client | undefined;
    try {
      c = await client();
      return await run(c);
    } catch (error) {
      const broken = !(error instanceof McpError) || error.code === ErrorCode.ConnectionClosed;
      if (broken && c) {
        if (current?.client === c) current = undefined;
        await c.close().catch(() => undefined);
      }
      throw new ClinAgentError('UPSTREAM_FAILED', describeFailure(name, what, error, c === undefined, config.timeoutMs), { server: name }, { cause: error });
    }
  }

  return {
    server: name,
    listTools: () => request('listing its tools', async (c) => {
      const tools: Tool[] = [];
      let cursor: string | undefined;
      do {
        const page = await c.listTools(cursor ? { cursor } : undefined, { timeout: config.timeoutMs });
        tools.push(...page.tools);
        cursor = page.nextCursor;
      } while (cursor);
      return tools;
    }),
    callTool: (tool, args) => request(`calling ${tool}`, async (c) => (await c.callTool({ name: tool, arguments: args }, undefined, { timeout: config.timeoutMs })) as CallToolResult),
    async close() {
      closed = true;
      const live = current;
      current = undefined;
      await live?.ready?.catch(() => undefined);
      await live?.client.close().catch(() => undefined);
    },
  };
}

/** What went wrong, naming the server, for the model, the trace and the operator: never a URL's secret or a stack. */
function describeFailure(server: string, what: string, error: unknown, connecting: boolean, timeoutMs: number): string {
  if (ClinAgentError.isInstance(error)) return error.message;
  const cause = (error as { cause?: unknown })?.cause;
  const detail = `${errorMessage(error)}${cause ? ` (${errorMessage(cause)})` : ''}`;
  if (error instanceof McpError && error.code === ErrorCode.RequestTimeout) {
    return `MCP server "${server}" did not answer within ${timeoutMs} ms ${connecting ? 'when connecting' : `when ${what}`} (its timeout_ms in MCP_SERVERS_FILE, or MCP_TIMEOUT_MS).`;
  }
  if (connecting) return `MCP server "${server}" could not be reached: ${detail}. Check that it is running; ClinAgent connects again at the next call.`;
  if (error instanceof McpError && error.code !== ErrorCode.ConnectionClosed) return `MCP server "${server}" refused ${what}: ${detail}`;
  return `MCP server "${server}" failed ${what}: ${detail}. ClinAgent connects again at the next call.`;
}
