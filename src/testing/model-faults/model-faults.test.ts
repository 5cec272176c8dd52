import { describe } from 'vitest';
import { defineFaultMatrix } from './define-matrix.js';

describe('every agent under every model fault on PGlite', () => {
  defineFaultMatrix('pglite');
});
