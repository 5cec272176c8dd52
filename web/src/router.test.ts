import { describe, expect, it } from 'vitest';
import { parseRoute, routes } from './router';

describe('parseRoute', () => {
  it('round-trips scenario ids that need escaping', () => {
    expect(parseRoute(routes.chat('protocol qa/v2'))).toEqual({ name: 'chat', scenarioId: 'protocol qa/v2' });
  });

  it('falls back to the scenario list for empty or unknown hashes', () => {
    expect(parseRoute('')).toEqual({ name: 'scenarios' });
    expect(parseRoute('#/nowhere')).toEqual({ name: 'scenarios' });
    expect(parseRoute(routes.api())).toEqual({ name: 'api' });
  });
});
