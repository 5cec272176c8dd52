/**
 * Regenerates data/demo-trial/ from the seeded generator: `npx tsx src/trial/demo/generate.ts`.
 * The output is byte-identical on every run; generate-demo-trial.test.ts fails if the committed files drift.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { DEMO_FILE_NAMES, demoTrialDir } from './demo-files.js';
import { generateDemoTrial } from './generate-demo-trial.js';

const dir = demoTrialDir();
const files = generateDemoTrial();
writeFileSync(path.join(dir, DEMO_FILE_NAMES.dictionaryCsv), files.dictionaryCsv);
writeFileSync(path.join(dir, DEMO_FILE_NAMES.eventsCsv), files.eventsCsv);
writeFileSync(path.join(dir, DEMO_FILE_NAMES.recordsCsv), files.recordsCsv);
writeFileSync(path.join(dir, DEMO_FILE_NAMES.plantedErrors), `${JSON.stringify(files.plantedErrors, null, 2)}\n`);
console.log(`Wrote the demo trial (${files.plantedErrors.length} planted errors) to ${dir}`);
