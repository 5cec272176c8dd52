import { readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { ClinAgentError, errorMessage, formatIssues } from '../../core/errors.js';
import { outboundUrlProblem, type OutboundUrlPolicy, type OutboundUrlWords } from '../../core/net/outbound-url.js';
import { MCP_SERVER_NAME } from '../../runtime/scenarios/mcp-block.js';

/**
 * The administrator's list of MCP servers (MCP_SERVERS_FILE, YAML or JSON). Scenario files only name a server from
 * here. Secrets are never written in the file: it names the environment variable that holds each one, and only
 * MCP_SECRET_ variables can be named, so the file can never make the server send DATABASE_URL, AUDIT_KEY or an
 * LLM key to a URL or a process of its choosing (as only DIFY_ variables can hold a Dify key).
 */
export const MCP_SECRET_PREFIX = 'MCP_SECRET_';
const secretEnv = z
  .string()
  .regex(/^MCP_SECRET_[A-Z0-9_]{1,100}$/, `must be the name of an environment variable starting with ${MCP_SECRET_PREFIX} (capitals, digits, _), e.g. ${MCP_SECRET_PREFIX}LABDATA_TOKEN; the secret is read from it, never written in the file`);

/** Results larger than this reach the model cut, saying so: 20 000 characters are about 5 000 tokens of a 32k context. */
const DEFAULT_MAX_RESULT_CHARS = 20_000;

const serverBlock = z
  .object({
    url: z.string().min(1).optional(),
    bearer_token_env: secretEnv.optional(),
    headers_env: z.record(z.string().regex(/^[A-Za-z0-9-]{1,100}$/, 'must be an HTTP header name, e.g. X-Api-Key'), secretEnv).optional(),
    command: z.string().min(1).optional(),
    args: z.array(z.string()).optional(),
    cwd: z.string().min(1).optional(),
    env: z.record(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]{0,100}$/, 'must be an environment variable name for the process, e.g. API_KEY'), secretEnv).optional(),
    timeout_ms: z.number().int().min(100).max(600_000).optional(),
    max_result_chars: z.number().int().min(1000).max(1_000_000).optional(),
  })
  .strict()
  .superRefine((server, ctx) => {
    if (server.url === undefined && server.command === undefined) ctx.addIssue({ code: 'custom', message: 'needs url (a Streamable HTTP server, e.g. https://mcp.lab.example.org/mcp) or command (a stdio server, with args)' });
    if (server.url !== undefined && server.command !== undefined) ctx.addIssue({ code: 'custom', path: ['command'], message: 'give url or command, not both' });
    const stdioOnly = ['args', 'cwd', 'env'] as const;
    const httpOnly = ['bearer_token_env', 'headers_env'] as const;
    if (server.url !== undefined) for (const field of stdioOnly) if (server[field] !== undefined) ctx.addIssue({ code: 'custom', path: [field], message: 'applies only to a stdio server (command)' });
    if (server.command !== undefined) for (const field of httpOnly) if (server[field] !== undefined) ctx.addIssue({ code: 'custom', path: [field], message: 'applies only to an HTTP server (url)' });
  });

const serversFileSchema = z
  .object({
    servers: z.record(z.string(), serverBlock).superRefine((servers, ctx) => {
      // The name's own message (zod's record says only "Invalid key in record").
      for (const name of Object.keys(servers)) {
        if (!MCP_SERVER_NAME.test(name)) ctx.addIssue({ code: 'custom', path: [name], message: 'must be a server name of 1-30 lowercase letters, digits or -, starting with a letter, e.g. labdata' });
      }
    }, { when: (payload) => isObject(payload.value) }),
  })
  .strict();

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export type McpTransportConfig =
  | { type: 'http'; url: string; bearerTokenEnv?: string; headersEnv: Readonly<Record<string, string>> }
  | { type: 'stdio'; command: string; args: readonly string[]; cwd?: string; env: Readonly<Record<string, string>> };

export interface McpServerConfig {
  name: string;
  transport: McpTransportConfig;
  /** Connecting, listing the tools and each call: past it the call fails naming the server. */
  timeoutMs: number;
  maxResultChars: number;
}

export interface McpServersPolicy extends OutboundUrlPolicy {
  /** MCP_TIMEOUT_MS: a server's timeout unless it sets timeout_ms. */
  timeoutMs: number;
}

const MCP_URL_WORDS: OutboundUrlWords = {
  what: 'an MCP server URL',
  example: "give the server's Streamable HTTP endpoint, e.g. https://mcp.lab.example.org/mcp",
  secretSource: 'name the token in bearer_token_env or headers_env',
  secret: 'its token',
  hostsSetting: 'MCP_ALLOWED_HOSTS',
  httpSetting: 'MCP_ALLOW_HTTP',
  localService: 'an MCP server on this machine or your own network',
  closedNetwork: 'a test server on a closed network',
};

/** Reads and checks the file; every problem is named with its field, at once, and stops start-up (CONFIG_INVALID). */
export function loadMcpServersFile(file: string, policy: McpServersPolicy): McpServerConfig[] {
  let raw: unknown;
  try {
    const text = readFileSync(file, 'utf8');
    raw = /\.json$/i.test(file) ? JSON.parse(text) : parseYaml(text);
  } catch (error) {
    throw new ClinAgentError('CONFIG_INVALID', `MCP_SERVERS_FILE ${file} cannot be read: ${errorMessage(error)}. Point MCP_SERVERS_FILE at a YAML or JSON file with a servers: map, or unset it.`, { field: 'MCP_SERVERS_FILE', file });
  }
  // Also when another field failed (the value may be raw then), so one start names every problem of the file.
  const parsed = serversFileSchema.superRefine((value, ctx) => {
    const servers: unknown = value.servers;
    if (!isObject(servers)) return;
    for (const [name, server] of Object.entries(servers)) {
      const url = isObject(server) && typeof server.url === 'string' && server.url ? server.url : undefined;
      const problem = url === undefined ? undefined : outboundUrlProblem(url, policy, MCP_URL_WORDS);
      if (problem) ctx.addIssue({ code: 'custom', path: ['servers', name, 'url'], message: problem });
    }
  }, { when: (payload) => isObject(payload.value) }).safeParse(raw);
  if (!parsed.success) {
    const problems = formatIssues(parsed.error.issues);
    throw new ClinAgentError('CONFIG_INVALID', `MCP_SERVERS_FILE ${file} is invalid; fix it and restart:\n- ${problems.join('\n- ')}`, { field: 'MCP_SERVERS_FILE', file, problems });
  }
  return Object.entries(parsed.data.servers).map(([name, server]) => ({
    name,
    transport: server.url !== undefined
      ? { type: 'http', url: server.url, bearerTokenEnv: server.bearer_token_env, headersEnv: server.headers_env ?? {} }
      : { type: 'stdio', command: server.command!, args: server.args ?? [], cwd: server.cwd, env: server.env ?? {} },
    timeoutMs: server.timeout_ms ?? policy.timeoutMs,
    maxResultChars: server.max_result_chars ?? DEFAULT_MAX_RESULT_CHARS,
  }));
}
