import { readFileSync } from 'node:fs';
import path from 'node:path';
import { packageRoot } from './core/paths.js';

export const VERSION: string = (JSON.parse(readFileSync(path.join(packageRoot(), 'package.json'), 'utf8')) as { version: string }).version;
