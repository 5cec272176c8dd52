import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The package root, found from this file whether it runs from src/ (tsx, tests) or dist/ (built), so
 * migrations, shipped scenarios and the built console are found without copying them into dist/.
 */
export function packageRoot(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  while (!existsSync(path.join(dir, 'package.json'))) {
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error('ClinAgent package root not found above ' + fileURLToPath(import.meta.url));
    dir = parent;
  }
  return dir;
}

export const migrationsFolder = (): string => path.join(packageRoot(), 'src', 'core', 'db', 'migrations');
