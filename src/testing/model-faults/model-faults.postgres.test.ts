import { describe } from 'vitest';
import { defineFaultMatrix } from './define-matrix.js';

// The agents that need pgvector (the consult's knowledge base, RAG scenarios) run on PGlite only (their targets say so).
describe.runIf(process.env.TEST_DATABASE_URL)(`every agent under every model fault on PostgreSQL${process.env.TEST_DATABASE_URL ? '' : ' (skipped: needs TEST_DATABASE_URL)'}`, () => {
  defineFaultMatrix('postgres');
});
