import type { HttpClient } from './http-client';
import type {
  ActivateSkillResult,
  ImportRedcapRulesRequest,
  ImportRedcapRulesResult,
  SavedSkillDraft,
  SkillDetail,
  SkillDryRunResult,
  SkillImpact,
  SkillValidation,
  SkillVersionList,
  SkillVersionView,
} from '../../../src/contract/index.js';

export type { ActivateSkillResult, ImportRedcapRulesRequest, ImportRedcapRulesResult, RedcapRuleListing, SavedSkillDraft, SkillDetail, SkillDryRunResult, SkillImpact, SkillProblem, SkillValidation, SkillVersionSummary, SkillVersionView } from '../../../src/contract/index.js';

const segment = encodeURIComponent;

/** QC skills stored with versions: read, draft, validate, activate, and the dry run and amendment impact of a skill on a trial's records. */
export function createSkillsApi(http: HttpClient) {
  return {
    get: (skillId: string) => http.get<SkillDetail>(`/api/iit/skills/${segment(skillId)}`),
    versions: async (skillId: string) => (await http.get<SkillVersionList>(`/api/iit/skills/${segment(skillId)}/versions`)).versions,
    version: (skillId: string, version: number) => http.get<SkillVersionView>(`/api/iit/skills/${segment(skillId)}/versions/${version}`),
    create: (yaml: string, comment?: string) => http.post<SavedSkillDraft>('/api/iit/skills', { yaml, ...(comment ? { comment } : {}) }),
    saveDraft: (skillId: string, yaml: string, comment?: string) => http.put<SavedSkillDraft>(`/api/iit/skills/${segment(skillId)}/draft`, { yaml, ...(comment ? { comment } : {}) }),
    validate: (yaml: string, projectId?: string) => http.post<SkillValidation>('/api/iit/skills/validate', { yaml, ...(projectId ? { projectId } : {}) }),
    activate: (skillId: string, version?: number, comment?: string) =>
      http.post<ActivateSkillResult>(`/api/iit/skills/${segment(skillId)}/activate`, { ...(version ? { version } : {}), ...(comment ? { comment } : {}) }),
    dryRun: (projectId: string, yaml: string, recordId?: string) =>
      http.post<SkillDryRunResult>(`/api/iit/projects/${segment(projectId)}/skills/dry-run`, { yaml, ...(recordId ? { recordId } : {}) }),
    /** What activating `yaml` instead of the active version would change on this trial; writes nothing. */
    impact: (projectId: string, yaml: string) => http.post<SkillImpact>(`/api/iit/projects/${segment(projectId)}/skills/impact`, { yaml }),
    /** REDCap Data Quality rules as a skill for the editor; with `preview: true`, each rule as it would be imported or why not. Writes nothing. */
    importRedcapRules: (projectId: string, body: ImportRedcapRulesRequest) => http.post<ImportRedcapRulesResult>(`/api/iit/projects/${segment(projectId)}/skills/import-redcap-rules`, body),
  };
}
