import { describe, expect, it } from 'vitest';
import { createLogger, redactText } from './logger.js';

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
