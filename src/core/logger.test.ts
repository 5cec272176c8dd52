import { describe, expect, it } from 'vitest';
import { createLogger, loggerSecrets, redactText } from './logger.js';
import { createSecretRegistry } from './secrets.js';

/** A pino destination that keeps each JSON line, so the test reads exactly what would reach a log shipper. */
function capture() {
  const lines: string[] = [];
  return {
    lines,
    destination: { write: (line: string) => void lines.push(line) },
    records: () => lines.map((line) => JSON.parse(line) as Record<string, any>),
  };
}

const apiKey = 'sk-abcdefghijklmnopqrstuvwx';
const bearer = 'eyJhbGciOiJIUzI1NiJ9.payload.signature';
const adminToken = 'f3a9c1d7e5b2a8c4d6e0f1a3b5c7d9e1f2a4b6c8';

describe('createLogger', () => {
  it('writes keys, tokens and authorization headers as [redacted]', () => {
    const out = capture();
    const logger = createLogger('info', out.destination);

    logger.info(
      {
        apiKey,
        token: adminToken,
        LLM_API_KEY: apiKey,
        CLINAGENT_ADMIN_TOKEN: adminToken,
        headers: { authorization: `Bearer ${bearer}` },
        req: { headers: { authorization: `Bearer ${bearer}`, cookie: `session=${adminToken}` } },
        config: { llm: { apiKey }, adminToken },
        subjectCount: 30,
      },
      'calling the model',
    );

    expect(out.lines).toHaveLength(1);
    const [record] = out.records();
    expect(record).toMatchObject({
      app: 'clinagent',
      msg: 'calling the model',
      apiKey: '[redacted]',
      token: '[redacted]',
      LLM_API_KEY: '[redacted]',
      CLINAGENT_ADMIN_TOKEN: '[redacted]',
      headers: { authorization: '[redacted]' },
      req: { headers: { authorization: '[redacted]', cookie: '[redacted]' } },
      config: { llm: { apiKey: '[redacted]' }, adminToken: '[redacted]' },
      subjectCount: 30,
    });
    for (const secret of [apiKey, bearer, adminToken]) expect(out.lines[0]).not.toContain(secret);
  });

  it('redacts child logger bindings, a nested environment dump and nested request headers', () => {
    const out = capture();
    const child = createLogger('info', out.destination).child({ area: 'llm', apiKey });

    child.warn({ env: { LLM_API_KEY: apiKey, EMBEDDING_API_KEY: apiKey, CLINAGENT_ADMIN_TOKEN: adminToken, LLM_MODEL: 'qwen-plus', DATABASE_URL: 'postgres://clin:s3cret-pass@db/clinagent' }, request: { headers: { authorization: `Bearer ${bearer}` } } }, 'env at start-up');

    const [record] = out.records();
    expect(record).toMatchObject({ area: 'llm', apiKey: '[redacted]', env: { LLM_API_KEY: '[redacted]', EMBEDDING_API_KEY: '[redacted]', CLINAGENT_ADMIN_TOKEN: '[redacted]', LLM_MODEL: 'qwen-plus', DATABASE_URL: '[redacted]' }, request: { headers: { authorization: '[redacted]' } } });
    expect(out.lines[0]).not.toContain(apiKey);
    expect(out.lines[0]).not.toContain(bearer);
    expect(out.lines[0]).not.toContain('s3cret-pass');
    expect(out.lines[0]).not.toContain(adminToken);
  });

  it('drops lines below its level', () => {
    const out = capture();
    const logger = createLogger('warn', out.destination);

    logger.info('not shown');
    logger.error('shown');

    expect(out.records().map((r) => r.msg)).toEqual(['shown']);
  });
});

describe('createLogger with a secret registry', () => {
  // A REDCap-style token: hex, no prefix, nothing a pattern could recognise.
  const redcapToken = '8F3A9C1D7E5B2A8C4D6E0F1A3B5C7D9E';

  it('masks a value registered at run time in the message, an err.cause chain and nested objects', () => {
    const out = capture();
    const logger = createLogger('info', out.destination);
    const child = logger.child({ area: 'redcap' });
    loggerSecrets(logger)!.add(redcapToken);

    const cause = new Error(`REDCap answered 403 for token=${redcapToken}`, { cause: new Error(`inner: ${redcapToken}`) });
    child.error({ err: new Error('sync failed', { cause }), request: { body: { form: `token=${redcapToken}&content=record` } }, list: [redcapToken] }, `sync with ${redcapToken} failed`);

    expect(out.lines).toHaveLength(1);
    expect(out.lines[0]).not.toContain(redcapToken);
    expect(out.lines[0]).toContain('token=[redacted]');
    expect(out.records()[0]).toMatchObject({ msg: 'sync with [redacted] failed', list: ['[redacted]'] });
  });

  it('masks a secret holding quotes or a backslash as it appears inside a JSON line, and URL-encoded', () => {
    const out = capture();
    const awkward = 'p"a\\ss/w+rd=42';
    const logger = createLogger('info', out.destination, { secrets: createSecretRegistry([awkward]) });

    logger.info({ password2: awkward, url: `https://redcap.example.org/api/?token=${encodeURIComponent(awkward)}` }, 'connecting');

    expect(out.lines[0]).not.toContain(JSON.stringify(awkward).slice(1, -1));
    expect(out.lines[0]).not.toContain(encodeURIComponent(awkward));
    expect(out.records()[0]).toMatchObject({ password2: '[redacted]', url: 'https://redcap.example.org/api/?token=[redacted]' });
  });

  it('ignores values too short to be secrets, so ordinary words survive', () => {
    const out = capture();
    const logger = createLogger('info', out.destination, { secrets: createSecretRegistry(['EMPTY', undefined, '']) });

    logger.info('the EMPTY key is accepted by local vLLM');

    expect(out.records()[0]!.msg).toBe('the EMPTY key is accepted by local vLLM');
  });
});

describe('redactText', () => {
  it('masks sk- keys and bearer tokens inside free text', () => {
    const text = `401 Incorrect API key provided: ${apiKey}. Header was "Authorization: Bearer ${bearer}".`;

    const redacted = redactText(text);

    expect(redacted).not.toContain(apiKey);
    expect(redacted).not.toContain(bearer);
    expect(redacted).toBe('401 Incorrect API key provided: [redacted]. Header was "Authorization: Bearer [redacted]".');
  });

  it('masks the given secrets wherever they appear, whatever their shape', () => {
    expect(redactText(`token=${adminToken}&again=${adminToken}`, [adminToken, undefined])).toBe('token=[redacted]&again=[redacted]');
  });

  it('leaves ordinary text alone', () => {
    const text = 'Subject S004 has no consent_date; SBP 300 mmHg is implausible; see task-list and sk-1.';
    expect(redactText(text, [])).toBe(text);
  });
});
