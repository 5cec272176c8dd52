import { writeTrialExport, type TrialImportSummary } from '../import/write-trial-export.js';
import type { TrialStore } from '../store/trial-store.js';
import type { RedcapClient } from './client.js';

/**
 * Pulls dictionary, schedule and records from REDCap's API and writes them as one audited change, the
 * same way a CSV import does. The export is fully checked before anything is written.
 */
export async function importFromRedcap(store: TrialStore, projectId: string, client: RedcapClient, actor: string, options: { reason?: string } = {}): Promise<TrialImportSummary> {
  const exported = await client.exportProject();
  return writeTrialExport(store, projectId, exported, actor, options.reason ?? 'REDCap API export');
}
