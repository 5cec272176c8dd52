import type { Db } from '../core/db/connect.js';
import { analyzeChunks, selectEstimatedChunkRows } from './rag-sql.js';

/**
 * Keeps the planner's statistics on rag_chunks current. search-plan.ts chooses between an exact and an index
 * search, but whether PostgreSQL then walks the scope's HNSW index, or the scope b-tree for an exact one, rests on
 * its row estimates. PGlite runs no autovacuum, so
 * without this a never-analysed table is estimated at one row and every search becomes an exact scan, which
 * at 100k chunks is tens of times slower. On a PostgreSQL server autovacuum does the same job; the extra
 * ANALYZE after large writes is cheap there.
 */
export interface ChunkStatistics {
  /** Call after rows were written or deleted; analyses when enough changed since the last analysis. */
  noteChanges(db: Db, rows: number): Promise<void>;
}

/** autovacuum's defaults: analyse after 50 rows plus 10% of the table have changed. */
const ANALYZE_THRESHOLD_ROWS = 50;
const ANALYZE_SCALE_FACTOR = 0.1;

export function createChunkStatistics(): ChunkStatistics {
  let changedSinceAnalyze = 0;
  return {
    async noteChanges(db, rows) {
      changedSinceAnalyze += rows;
      const estimate = await selectEstimatedChunkRows(db);
      if (estimate < 0 || changedSinceAnalyze > ANALYZE_THRESHOLD_ROWS + ANALYZE_SCALE_FACTOR * estimate) {
        await analyzeChunks(db);
        changedSinceAnalyze = 0;
      }
    },
  };
}
