import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createContext } from '../../context.js';
import { loadConfig } from '../../core/config.js';
import { createLogger } from '../../core/logger.js';
import { createSecretRegistry } from '../../core/secrets.js';
import { createToolRegistry } from '../../core/tools/registry.js';
import { loadScenario } from '../../runtime/scenarios/load.js';
import { errorOf, rejectionOf } from '../../testing/error-of.js';
import { MCP_TEST_TOKEN, startMcpTestServer, type McpTestServer } from '../../testing/mcp-test-server.js';
import { loadMcpServersFile } from './servers-file.js';
import { openMcpServers, type McpServers } from './mcp-servers.js';

/**
 * What the administrator writes (MCP_SERVERS_FILE) and what a scenario names, checked at start-up: every problem
 * named with its field; secrets only from MCP_SECRET_ variables; URLs under the one outbound URL policy.
 */
describe('the MCP servers file', () => {
  let dir: string;
  const policy = { allowHttp: false, allowedHosts: [] as string[], timeoutMs: 30_000 };
  const fileWith = (text: string, name = 'mcp-servers.yaml') => {
    const file = path.join(dir, name);
    writeFileSync(file, text);
    return file;
  };
  beforeAll(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'clinagent-mcp-config-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('refuses a secret named by a variable without the MCP_SECRET_ prefix, naming the field and the prefix to use', () => {
    const file = fileWith(`
servers:
  labdata:
    url: https://mcp.lab.example.org/mcp
    bearer_token_env: DATABASE_URL
    headers_env: { X-Api-Key: LLM_API_KEY }
  files:
    command: /usr/bin/mcp-files
    env: { TOKEN: AUDIT_KEY }
`);
    const error = errorOf(() => loadMcpServersFile(file, policy));
    expect(error.code).toBe('CONFIG_INVALID');
    expect(error.details.problems).toEqual([
      'servers.labdata.bearer_token_env: must be the name of an environment variable starting with MCP_SECRET_ (capitals, digits, _), e.g. MCP_SECRET_LABDATA_TOKEN; the secret is read from it, never written in the file',
      'servers.labdata.headers_env.X-Api-Key: must be the name of an environment variable starting with MCP_SECRET_ (capitals, digits, _), e.g. MCP_SECRET_LABDATA_TOKEN; the secret is read from it, never written in the file',
      'servers.files.env.TOKEN: must be the name of an environment variable starting with MCP_SECRET_ (capitals, digits, _), e.g. MCP_SECRET_LABDATA_TOKEN; the secret is read from it, never written in the file',
    ]);
    expect(error.message).toContain(`MCP_SERVERS_FILE ${file} is invalid`);
  });

  it('holds server URLs to the Dify URL policy under the MCP settings, and names every other problem of a server', () => {
    const file = fileWith(`
servers:
  metadata:
    url: http://169.254.169.254/mcp
  plain:
    url: http://mcp.example.org/mcp
  creds:
    url: https://user:pw@mcp.example.org/mcp
  both:
    url: https://mcp.example.org/mcp
    command: /usr/bin/x
  neither:
    timeout_ms: 1000
  mixed:
    command: /usr/bin/x
    bearer_token_env: MCP_SECRET_X
  Bad_Name:
    command: /usr/bin/x
`);
    expect(errorOf(() => loadMcpServersFile(file, policy)).details.problems).toEqual([
      'servers.both.command: give url or command, not both',
      'servers.neither: needs url (a Streamable HTTP server, e.g. https://mcp.lab.example.org/mcp) or command (a stdio server, with args)',
      'servers.mixed.bearer_token_env: applies only to an HTTP server (url)',
      'servers.Bad_Name: must be a server name of 1-30 lowercase letters, digits or -, starting with a letter, e.g. labdata',

      'servers.metadata.url: names 169.254.169.254, a link-local address (where clouds serve instance metadata and credentials); an MCP server URL must be a public host unless the server names the host in MCP_ALLOWED_HOSTS (an MCP server on this machine or your own network)',
      'servers.plain.url: must be https, so its token never travels unencrypted; plain http is allowed only to a loopback host named in MCP_ALLOWED_HOSTS, or anywhere when the server sets MCP_ALLOW_HTTP=true (a test server on a closed network)',
      'servers.creds.url: must not carry a user name or password; name the token in bearer_token_env or headers_env',
    ]);
    // MCP_ALLOW_HTTP and MCP_ALLOWED_HOSTS are the administrator's say, as DIFY_ALLOW_HTTP and DIFY_ALLOWED_HOSTS are.
    const allowed = fileWith('servers:\n  plain:\n    url: http://mcp.example.org/mcp\n  local:\n    url: http://10.0.0.5:8080/mcp\n');
    expect(loadMcpServersFile(allowed, { ...policy, allowHttp: true, allowedHosts: ['10.0.0.5'] }).map((s) => [s.name, s.transport.type, s.timeoutMs])).toEqual([['plain', 'http', 30_000], ['local', 'http', 30_000]]);
  });

  it('stops start-up on an invalid file, before the database is opened, and on one that cannot be read', async () => {
    const file = fileWith('servers:\n  labdata:\n    url: https://mcp.example.org/mcp\n    bearer_token_env: LLM_API_KEY\n');
    const config = loadConfig({ MCP_SERVERS_FILE: file, SCENARIOS_DIR: dir, DATA_DIR: path.join(dir, 'never-created') }, dir);
    const error = await rejectionOf(createContext(config, { logger: createLogger('silent') }));
    expect(error.code).toBe('CONFIG_INVALID');
    expect(error.message).toMatch(/servers\.labdata\.bearer_token_env: must be the name of an environment variable starting with MCP_SECRET_/);
    expect(errorOf(() => loadMcpServersFile(path.join(dir, 'absent.yaml'), policy)).message).toMatch(/^MCP_SERVERS_FILE .*absent\.yaml cannot be read: .*Point MCP_SERVERS_FILE at a YAML or JSON file/);
  });
});

describe('a scenario naming MCP servers and tools', () => {
  let dir: string;
  let labdata: McpTestServer;
  let servers: McpServers;
  const lines: string[] = [];
  /** The server's environment: the test sets the missing secret later, as an administrator would. */
  const env: Record<string, string | undefined> = { MCP_SECRET_LABDATA_TOKEN: MCP_TEST_TOKEN };

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'clinagent-mcp-scenario-'));
    labdata = await startMcpTestServer();
    const file = path.join(dir, 'mcp-servers.json');
    writeFileSync(file, JSON.stringify({ servers: { labdata: { url: labdata.url, bearer_token_env: 'MCP_SECRET_LABDATA_TOKEN' }, locked: { url: labdata.url, bearer_token_env: 'MCP_SECRET_LOCKED_TOKEN' } } }));
    const sink = new Writable({ write(chunk, _encoding, done) { lines.push(String(chunk)); done(); } });
    // MCP_SECRET_LOCKED_TOKEN is not set: that server cannot be connected at start-up, which does not stop it.
    servers = await openMcpServers({ serversFile: file, allowedHosts: ['127.0.0.1'], timeoutMs: 5000 }, { env, secrets: createSecretRegistry(), logger: createLogger('info', sink), clientVersion: 'test' });
  });
  afterAll(async () => {
    await servers?.close();
    await labdata?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const scenario = (name: string, mcp: string) => {
    const file = path.join(dir, `${name}.yaml`);
    writeFileSync(file, `id: ${name}\nname: ${name}\nsystem_prompt: Help.\n${mcp}`);
    return file;
  };

  it('is refused naming the file and field for a server that is not configured or a tool the server does not list', () => {
    const tools = createToolRegistry();
    servers.register(tools);
    const file = scenario('wrong', 'mcp:\n  - server: nosuch\n    tools: [a, b]\n  - server: labdata\n    tools: [lookup_visit, nope]\n');
    const error = errorOf(() => loadScenario(file, { mcp: servers }));
    expect(error.code).toBe('SCENARIO_INVALID');
    expect(error.message).toContain(file);
    expect(error.details.problems).toEqual([
      'mcp.0.server: "nosuch" is not a configured MCP server (configured: labdata, locked; the administrator lists them in the file MCP_SERVERS_FILE names)',
      'mcp.1.tools.1: "nope" is not a tool of MCP server labdata (it lists: lookup_visit, visit_counts, long_report, failing_lookup, slow_lookup, delete_visit)',
    ]);
    // Without configured servers, any server named is not configured; and a Dify app has tools of its own.
    expect(errorOf(() => loadScenario(scenario('none', 'mcp:\n  - server: labdata\n    tools: [lookup_visit]\n'))).details.problems).toEqual([
      'mcp.0.server: "labdata" is not a configured MCP server: this server configures none (the administrator lists them in the file MCP_SERVERS_FILE names)',
    ]);
    const dify = path.join(dir, 'dify.yaml');
    writeFileSync(dify, 'id: dify\nname: dify\nengine: {type: dify, base_url: "https://dify.example.org/v1", api_key_env: DIFY_KEY}\nmcp:\n  - server: labdata\n    tools: [lookup_visit]\n');
    expect(errorOf(() => loadScenario(dify, { mcp: servers })).details.problems).toContain('mcp: not allowed with engine.type dify: the Dify app has its own prompt, tools, knowledge, model and conversation memory; set them in Dify');
  });

  it('compiles a valid reference to the namespaced registry tools, and a server whose secret is unset starts without it, its calls saying what to set', async () => {
    const tools = createToolRegistry();
    servers.register(tools);
    const file = scenario('right', 'tools: [mcp__labdata__lookup_visit]\nmcp:\n  - server: labdata\n    tools: [lookup_visit, visit_counts]\n  - server: locked\n    tools: [lookup_visit]\n');
    expect(loadScenario(file, { mcp: servers }).tools).toEqual(['mcp__labdata__lookup_visit', 'mcp__labdata__visit_counts', 'mcp__locked__lookup_visit']);
    expect(lines.join('')).toMatch(/"mcpServer":"locked","err":"MCP_SECRET_LOCKED_TOKEN is not set: .*could not be listed at start-up; ClinAgent starts anyway/);
    const call = await tools.run('mcp__locked__lookup_visit', { visit: 1 });
    expect(call).toMatchObject({ success: false, error: 'mcp__locked__lookup_visit failed: MCP_SECRET_LOCKED_TOKEN is not set: MCP server "locked" needs it (MCP_SERVERS_FILE names it). Set it on the server and restart.' });

    // Once the server can be reached, the tool is looked up in its list and its arguments checked before it is called.
    env.MCP_SECRET_LOCKED_TOKEN = MCP_TEST_TOKEN;
    const callsBefore = labdata.calls.length;
    expect(await tools.run('mcp__locked__lookup_visit', { visit: 'one' })).toMatchObject({ success: false, error: 'mcp__locked__lookup_visit failed: Invalid arguments (the server was not called):\nvisit: must be integer' });
    expect(labdata.calls.length).toBe(callsBefore);
    expect(await tools.run('mcp__locked__lookup_visit', { visit: 2 })).toMatchObject({ success: true, result: 'Visit 2: week 8, labs complete.' });
    expect(labdata.calls.at(-1)).toEqual({ tool: 'lookup_visit', args: { visit: 2 } });
    const unlisted = path.join(dir, 'unlisted.yaml');
    writeFileSync(unlisted, 'id: unlisted\nname: unlisted\nsystem_prompt: Help.\nmcp:\n  - server: locked\n    tools: [no_such_tool]\n');
    const admitted = loadScenario(unlisted, { mcp: servers }).tools[0]!;
    expect(await tools.run(admitted, {})).toMatchObject({ success: false, error: expect.stringMatching(/^mcp__locked__no_such_tool failed: MCP server "locked" does not list a tool "no_such_tool" \(it lists: lookup_visit, /) });
  });
});
