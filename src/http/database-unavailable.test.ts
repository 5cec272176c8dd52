import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { errorHandler } from './error-handler.js';

/**
 * A request that meets PostgreSQL restarting (found by the chaos test, issue 35) is answered 503 saying the database
 * is unavailable and the request may not have completed (what it committed before stays), not a 500 "internal error".
 */
describe('a request while the database restarts', () => {
  const failing = (error: Error) => {
    const app = Fastify();
    app.setErrorHandler(errorHandler);
    app.get('/work', async () => {
      throw error;
    });
    return app;
  };
  // What node-postgres throws: a DatabaseError with the SQLSTATE in `code`, sometimes wrapped by drizzle as its cause.
  const pgError = (code: string, message: string) => Object.assign(new Error(message), { code, severity: 'FATAL' });

  it.each([
    ['the database system is shutting down', pgError('57P03', 'the database system is shutting down')],
    ['terminating connection due to administrator command', pgError('57P01', 'terminating connection due to administrator command')],
    ['a connection that broke earlier in the request', Object.assign(new Error('Failed query: rollback'), { cause: new Error('Client has encountered a connection error and is not queryable') })],
    ['a refused connection, wrapped by the query builder', Object.assign(new Error('Failed query: select 1'), { cause: Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' }) })],
  ])('answers 503 DATABASE_UNAVAILABLE for %s', async (_name, error) => {
    const response = await failing(error).inject({ method: 'GET', url: '/work' });
    expect(response.statusCode).toBe(503);
    expect(response.json()).toMatchObject({ code: 'DATABASE_UNAVAILABLE', message: expect.stringMatching(/may not have completed.*try again/) });
  });

  it('keeps other failures a 500 with the request id', async () => {
    const response = await failing(pgError('23505', 'duplicate key value violates unique constraint')).inject({ method: 'GET', url: '/work' });
    expect(response.statusCode).toBe(500);
    expect(response.json().code).toBe('INTERNAL');
  });
});
