import { describe, expect, it } from 'vitest';
import { consoleHref, hashForPathLink, parseRoute, routes, trialPageIn } from './router';

describe('parseRoute', () => {
  it('round-trips scenario ids that need escaping', () => {
    expect(parseRoute(routes.chat('protocol qa/v2'))).toEqual({ name: 'chat', scenarioId: 'protocol qa/v2' });
  });

  it('falls back to the scenario list for empty or unknown hashes', () => {
    expect(parseRoute('')).toEqual({ name: 'scenarios' });
    expect(parseRoute('#/nowhere')).toEqual({ name: 'scenarios' });
    expect(parseRoute('#/trial/p1/nowhere')).toEqual({ name: 'scenarios' });
    expect(parseRoute(routes.api())).toEqual({ name: 'api' });
  });

  it('round-trips the tokens and users pages', () => {
    expect(parseRoute(routes.tokens())).toEqual({ name: 'tokens' });
    expect(parseRoute(routes.users())).toEqual({ name: 'users' });
    expect(parseRoute('#/users/')).toEqual({ name: 'users' });
  });

  it('opens the first project when the trial link names none', () => {
    expect(parseRoute(routes.trial())).toEqual({ name: 'trial', projectId: null, page: { kind: 'runs' } });
    expect(parseRoute('#/trial/')).toEqual({ name: 'trial', projectId: null, page: { kind: 'runs' } });
  });

  it('round-trips every trial page with ids that need escaping', () => {
    const project = 'HTN 01/a';
    expect(parseRoute(routes.trialRuns(project))).toEqual({ name: 'trial', projectId: project, page: { kind: 'runs' } });
    expect(parseRoute(routes.trialQueries(project))).toEqual({ name: 'trial', projectId: project, page: { kind: 'queries' } });
    expect(parseRoute(routes.trialReview(project))).toEqual({ name: 'trial', projectId: project, page: { kind: 'review' } });
    expect(parseRoute(routes.trialAssistant(project))).toEqual({ name: 'trial', projectId: project, page: { kind: 'assistant' } });
    expect(parseRoute(routes.trialMemory(project))).toEqual({ name: 'trial', projectId: project, page: { kind: 'memory' } });
    expect(parseRoute(routes.trialReports(project))).toEqual({ name: 'trial', projectId: project, page: { kind: 'reports' } });
    expect(parseRoute(routes.trialImport(project))).toEqual({ name: 'trial', projectId: project, page: { kind: 'import' } });
    expect(parseRoute(routes.trialRecord(project, 'S/01'))).toEqual({ name: 'trial', projectId: project, page: { kind: 'record', recordId: 'S/01' } });
    expect(parseRoute(routes.taskRun(project, 'r1'))).toEqual({ name: 'trial', projectId: project, page: { kind: 'taskRun', taskRunId: 'r1' } });
  });

  it('keeps the list page when switching project and leaves detail pages for the runs page', () => {
    expect(trialPageIn('p2', { kind: 'queries' })).toBe(routes.trialQueries('p2'));
    expect(trialPageIn('p2', { kind: 'record', recordId: 'S1' })).toBe(routes.trialRuns('p2'));
    expect(trialPageIn('p2', { kind: 'memory' })).toBe(routes.trialMemory('p2'));
    expect(trialPageIn('p2', { kind: 'assistant' })).toBe(routes.trialAssistant('p2'));
    expect(trialPageIn('p2', { kind: 'import' })).toBe(routes.trialImport('p2'));
  });

  it('round-trips the trace page', () => {
    expect(parseRoute(routes.trace('3f0c1a9e-5b7d-4c2e-9a41-0d6b8e2f7c13'))).toEqual({ name: 'trace', traceId: '3f0c1a9e-5b7d-4c2e-9a41-0d6b8e2f7c13' });
    expect(parseRoute('#/traces/')).toEqual({ name: 'scenarios' });
  });

  it('round-trips the protocol pages, with or without a protocol open', () => {
    expect(parseRoute(routes.protocols())).toEqual({ name: 'protocol', conversationId: null });
    expect(parseRoute('#/protocol/')).toEqual({ name: 'protocol', conversationId: null });
    expect(parseRoute(routes.protocol('5f0c1a9e-5b7d-4c2e-9a41-0d6b8e2f7c13'))).toEqual({ name: 'protocol', conversationId: '5f0c1a9e-5b7d-4c2e-9a41-0d6b8e2f7c13' });
    expect(parseRoute('#/protocol/a/b')).toEqual({ name: 'scenarios' });
  });

  it('reads the calculator inputs from the query string, decoded', () => {
    const params = { conversationId: 'c1', cardId: 'sample_size_calculator', design: 'two_means', alpha: '0.05', note: 'a&b c' };
    expect(parseRoute(routes.protocolCalculator(params))).toEqual({ name: 'protocolCalculator', params });
    expect(parseRoute('#/protocol/calculator')).toEqual({ name: 'protocolCalculator', params: {} });
    expect(parseRoute('#/protocol/calculator?design=two_proportions&p1=0.3')).toEqual({ name: 'protocolCalculator', params: { design: 'two_proportions', p1: '0.3' } });
  });
});

describe('the consult route', () => {
  it('round-trips the consult pages, with or without a consult open', () => {
    expect(parseRoute(routes.consults())).toEqual({ name: 'consult', sessionId: null });
    expect(parseRoute('#/consult/')).toEqual({ name: 'consult', sessionId: null });
    expect(parseRoute(routes.consult('7a0c1a9e-5b7d-4c2e-9a41-0d6b8e2f7c13'))).toEqual({ name: 'consult', sessionId: '7a0c1a9e-5b7d-4c2e-9a41-0d6b8e2f7c13' });
    expect(parseRoute('#/consult/a/b')).toEqual({ name: 'scenarios' });
    expect(hashForPathLink({ pathname: '/consult', search: '', hash: '' })).toBe('#/consult');
  });
});

describe('deep links', () => {
  it("moves an action card's site path behind the hash and leaves other links alone", () => {
    expect(consoleHref('/protocol/calculator?conversationId=c1&design=two_means')).toBe('#/protocol/calculator?conversationId=c1&design=two_means');
    expect(consoleHref('#/protocol/calculator?design=two_means')).toBe('#/protocol/calculator?design=two_means');
    expect(consoleHref('https://example.org/calc')).toBe('https://example.org/calc');
    expect(consoleHref('//example.org/calc')).toBe('//example.org/calc');
    expect(consoleHref('/api/tools/sample-size')).toBe('/api/tools/sample-size');
  });

  it('turns a console page typed as a site path into its hash route', () => {
    expect(hashForPathLink({ pathname: '/protocol/calculator', search: '?design=two_means&alpha=0.05', hash: '' })).toBe('#/protocol/calculator?design=two_means&alpha=0.05');
    expect(hashForPathLink({ pathname: '/trial/p1/queries', search: '', hash: '' })).toBe('#/trial/p1/queries');
    expect(hashForPathLink({ pathname: '/scenarios', search: '', hash: '' })).toBe('#/scenarios');
  });

  it('leaves the root, a set hash and unknown paths as they are', () => {
    expect(hashForPathLink({ pathname: '/', search: '?login=login_x', hash: '' })).toBeNull();
    expect(hashForPathLink({ pathname: '/protocol/calculator', search: '', hash: '#/trial' })).toBeNull();
    expect(hashForPathLink({ pathname: '/favicon-nowhere', search: '', hash: '' })).toBeNull();
  });
});
