import { readFileSync } from 'node:fs';
import path from 'node:path';
import { packageRoot } from '../core/paths.js';

export type DemoRecord = Record<string, string | number | null>;

export interface DemoRecordSet {
  study: string;
  description: string;
  records: DemoRecord[];
}

/** The synthetic records the built-in tools work on (data/demo/records.json; no real patients). */
export function loadDemoRecords(file = path.join(packageRoot(), 'data', 'demo', 'records.json')): DemoRecordSet {
  return JSON.parse(readFileSync(file, 'utf8')) as DemoRecordSet;
}
