import type { MembershipCheck } from '../core/auth/membership.js';
import type { ProjectDirectory } from '../core/auth/projects.js';
import type { Config } from '../core/config.js';
import type { SecretRegistry } from '../core/secrets.js';
import type { RagStore } from '../rag/index.js';
import { createProtocolDocumentService } from './protocol-documents/protocol-document-service.js';
import { createReadToolService } from './read-tools/read-tool-service.js';
import { createImportService } from './import/import-service.js';
import { createQcService } from './qc/qc-service.js';
import { createQueryService } from './queries/query-service.js';
import { createRecordService } from './records/record-service.js';
import { createRedcapService } from './redcap/redcap-service.js';
import { createReportService } from './report/report-service.js';
import { createSkillTools } from './skill-tools/skill-tools.js';
import { createSkillService } from './skills/skill-service.js';
import { createSopDeps, type SopDepsInput } from './sop/sop-deps.js';
import type { SkillCatalog } from './sop/skill-catalog.js';
import { createTrialStore } from './store/trial-store.js';

/** The slice of the application context the trial area works with (the app's context has all of it): what the SOP engine runs with, and more. */
export interface TrialServiceDeps extends Omit<SopDepsInput, 'config' | 'skills'> {
  config: Pick<Config, 'host' | 'port' | 'qc' | 'redcap'>;
  users: MembershipCheck & ProjectDirectory;
  secrets: SecretRegistry;
  skills: SkillCatalog;
  /** Each project's protocol documents, searched by the assistant's search_protocol tool. */
  rag: RagStore;
  /** False on a PostgreSQL without pgvector: protocol documents answer VECTOR_STORE_UNAVAILABLE. */
  hasVectorStore: boolean;
}

/**
 * The trial quality-control area as services, built once per process (src/context.ts) and handed to the route
 * plugin, worker or command that uses each one. Every function that reads or writes a project's data takes the
 * acting user first and checks access in its service, not in the caller: reads need membership (a non-member gets
 * NOT_FOUND, as if the project, run or query did not exist), changes a writer role (a viewer gets FORBIDDEN).
 */
export function createTrialServices(deps: TrialServiceDeps) {
  const { db, users } = deps;
  const store = createTrialStore(db);
  return {
    /** For the job workers, which act for the system (a run someone started, or cron), not for a user. */
    sop: createSopDeps(deps),
    imports: createImportService({ db, store, users, skills: deps.skills }),
    redcap: createRedcapService({ db, store, users, secrets: deps.secrets, config: deps.config.redcap }),
    records: createRecordService({ db, store, users }),
    skills: createSkillService({ db, users, tools: deps.tools, catalog: deps.skills }),
    skillTools: createSkillTools({
      db,
      users,
      tools: deps.tools,
      // A proposed version is compared with the active one, refreshed first: another process may have activated one.
      activeSkills: async () => {
        await deps.skills.refresh();
        return deps.skills.list();
      },
    }),
    qc: createQcService({ db, jobs: deps.jobs, users, skills: deps.skills }),
    queries: createQueryService({ db, users }),
    reports: createReportService({ db, users }),
    protocolDocuments: createProtocolDocumentService({ users, rag: deps.rag, hasVectorStore: deps.hasVectorStore, jobs: deps.jobs }),
    readTools: createReadToolService({ db, users, rag: deps.rag, hasVectorStore: deps.hasVectorStore }),
  };
}

export type TrialServices = ReturnType<typeof createTrialServices>;
