import type { HttpClient } from './http-client';
import type { RuleYieldList, RuleYieldQuery } from '../../../src/contract/index.js';

export type { LowYieldThresholds, RuleYieldList, RuleYieldQuery, RuleYieldRow } from '../../../src/contract/index.js';

/** What each rule's queries came to (GET /api/iit/projects/:projectId/rule-yield); any member reads it. */
export function createRuleYieldApi(http: HttpClient) {
  return {
    get: (projectId: string, filter: RuleYieldQuery = {}) => {
      const query = new URLSearchParams(Object.entries(filter).filter((entry): entry is [string, string] => Boolean(entry[1])));
      const search = query.toString();
      return http.get<RuleYieldList>(`/api/iit/projects/${encodeURIComponent(projectId)}/rule-yield${search ? `?${search}` : ''}`);
    },
  };
}
