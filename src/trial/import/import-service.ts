import { assertProjectWriter } from '../../core/auth/project-access.js';
import { canViewIdentifiers } from '../../core/auth/identifier-access.js';
import type { MembershipCheck } from '../../core/auth/membership.js';
import type { User } from '../../core/auth/users.js';
import type { Db } from '../../core/db/connect.js';
import { ClinAgentError } from '../../core/errors.js';
import { skillAppliesTo, type SkillCatalog } from '../sop/skill-catalog.js';
import type { TrialStore } from '../store/trial-store.js';
import { checkRedcapCsv, importRedcapCsv, type RedcapCsvFiles } from './import-redcap-csv.js';
import { checkOdm, importOdm, type OdmImportFile } from './odm/import-odm.js';
import { previewImport } from './preview-import.js';

interface ImportServiceDeps {
  db: Db;
  store: TrialStore;
  users: MembershipCheck;
  /** The active skills: an import preview names the rules of a project's skills a new dictionary affects. */
  skills: Pick<SkillCatalog, 'list'>;
}

/**
 * File imports into a trial (REDCap CSV exports and CDISC ODM files), and their previews that write nothing. Only
 * the project's writers import; everyone else is refused here, so HTTP and the CLI get the same answer.
 */
export function createImportService(deps: ImportServiceDeps) {
  const { db, store, users } = deps;
  const projectSkills = (projectId: string) => deps.skills.list().filter((skill) => skillAppliesTo(skill, projectId));

  return {
    /** Files may be text or uploaded bytes (decoded from UTF-8 or GBK/GB18030, or refused). */
    importCsv: async (actor: User, projectId: string, files: RedcapCsvFiles) => {
      await assertProjectWriter(users, actor, projectId);
      assertCsvFilesSent(files);
      return importRedcapCsv(store, projectId, files, actor.name);
    },
    /** A CDISC ODM 1.3 file (REDCap, OpenClinica, Castor...) with metadata and clinical data; all-or-nothing like the CSV import. */
    importOdm: async (actor: User, projectId: string, file: OdmImportFile) => {
      await assertProjectWriter(users, actor, projectId);
      assertOdmFileSent(file);
      return importOdm(store, projectId, file, actor.name);
    },
    /** What importCsv would import, and every problem it would refuse, writing nothing; for those who may import. */
    previewCsv: async (actor: User, projectId: string, files: RedcapCsvFiles) => {
      await assertProjectWriter(users, actor, projectId);
      assertCsvFilesSent(files);
      return previewImport(store, projectId, () => checkRedcapCsv(store, projectId, files), projectSkills(projectId), { mayViewIdentifiers: await canViewIdentifiers(db, projectId, actor) });
    },
    /** What importOdm would import, and every problem it would refuse, writing nothing. */
    previewOdm: async (actor: User, projectId: string, file: OdmImportFile) => {
      await assertProjectWriter(users, actor, projectId);
      assertOdmFileSent(file);
      return previewImport(store, projectId, () => checkOdm(file), projectSkills(projectId), { mayViewIdentifiers: await canViewIdentifiers(db, projectId, actor) });
    },
  };
}

export type ImportService = ReturnType<typeof createImportService>;

function assertCsvFilesSent(files: RedcapCsvFiles): void {
  const isMissing = (file: RedcapCsvFiles['dictionaryCsv'] | undefined) => file === undefined || file.length === 0;
  if (isMissing(files.dictionaryCsv) || isMissing(files.recordsCsv)) {
    throw new ClinAgentError('VALIDATION_FAILED', 'Send the REDCap data dictionary CSV as "dictionary" and the records export CSV as "records" (and optionally the events CSV as "events" and the arms CSV as "arms"), or instead a CDISC ODM 1.3 XML export with metadata and clinical data as "odm".', { field: 'files' });
  }
}

function assertOdmFileSent(file: OdmImportFile): void {
  if (file.odm.length === 0) {
    throw new ClinAgentError('VALIDATION_FAILED', 'The "odm" file is empty. Send the CDISC ODM 1.3 XML export with metadata and clinical data as "odm" (in REDCap: Data Exports > "CDISC ODM (XML)" with the project metadata).', { field: 'odm' });
  }
}
