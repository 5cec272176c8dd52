import { readFileSync } from 'node:fs';
import path from 'node:path';
import { packageRoot } from '../../core/paths.js';
import type { PlantedError } from './demo-definition.js';

/** Where the generated, committed demo files live; shipped with the package ("data" in package.json files). */
export const demoTrialDir = (): string => path.join(packageRoot(), 'data', 'demo-trial');

export const DEMO_FILE_NAMES = { dictionaryCsv: 'dictionary.csv', eventsCsv: 'events.csv', recordsCsv: 'records.csv', plantedErrors: 'planted-errors.json' } as const;

export function readDemoTrialFiles(dir = demoTrialDir()): { dictionaryCsv: string; eventsCsv: string; recordsCsv: string } {
  const read = (name: string) => readFileSync(path.join(dir, name), 'utf8');
  return { dictionaryCsv: read(DEMO_FILE_NAMES.dictionaryCsv), eventsCsv: read(DEMO_FILE_NAMES.eventsCsv), recordsCsv: read(DEMO_FILE_NAMES.recordsCsv) };
}

/** The errors planted in the demo data: what a QC run over the demo trial should find, and only that. */
export function readPlantedErrors(dir = demoTrialDir()): PlantedError[] {
  return JSON.parse(readFileSync(path.join(dir, DEMO_FILE_NAMES.plantedErrors), 'utf8')) as PlantedError[];
}
