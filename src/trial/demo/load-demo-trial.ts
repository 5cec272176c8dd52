import { importRedcapCsv, type RedcapCsvImportSummary } from '../import/import-redcap-csv.js';
import type { TrialStore } from '../store/trial-store.js';
import { DEMO_PROJECT } from './demo-definition.js';
import { demoTrialDir, readDemoTrialFiles } from './demo-files.js';

interface DemoTrialLoad extends RedcapCsvImportSummary {
  projectId: string;
  isProjectCreated: boolean;
}

/**
 * Imports the shipped demo trial (data/demo-trial/) into project "demo-htn-01" through the same path as a
 * site's CSV export, so the demo also proves the importer. Idempotent: a second call changes nothing, but it
 * does put back any demo record edited since; use ensureDemoTrial at start-up.
 */
export async function loadDemoTrial(store: TrialStore, actor = 'system', options: { dir?: string } = {}): Promise<DemoTrialLoad> {
  const files = readDemoTrialFiles(options.dir ?? demoTrialDir());
  return store.transaction(async (tx) => {
    const isProjectCreated = await tx.ensureProject(DEMO_PROJECT, actor);
    const summary = await importRedcapCsv(tx, DEMO_PROJECT.id, files, actor, { reason: 'Load the synthetic demo trial DEMO-HTN-01' });
    return { projectId: DEMO_PROJECT.id, isProjectCreated, ...summary };
  });
}

/**
 * The first-start hook: loads the demo trial only when its project does not exist yet, so a newcomer sees
 * QC working at once, while corrections made to demo records (answered queries) survive restarts.
 * Two processes starting together load it once: the second waits on the first's project row, then skips.
 */
export async function ensureDemoTrial(store: TrialStore, actor = 'system', options: { dir?: string } = {}): Promise<DemoTrialLoad | undefined> {
  const files = readDemoTrialFiles(options.dir ?? demoTrialDir());
  return store.transaction(async (tx) => {
    if (!(await tx.ensureProject(DEMO_PROJECT, actor))) return undefined;
    const summary = await importRedcapCsv(tx, DEMO_PROJECT.id, files, actor, { reason: 'Load the synthetic demo trial DEMO-HTN-01 on first start' });
    return { projectId: DEMO_PROJECT.id, isProjectCreated: true, ...summary };
  });
}
