import type { Db } from '../core/db/connect.js';
import type { ChunkStatistics } from './chunk-statistics.js';
import * as q from './rag-sql.js';
import { collectionIndexName, type VectorShape } from './vector-sql.js';

/** Rough in-memory size of one HNSW element beyond its vector: neighbour lists and tuple headers. */
const HNSW_ELEMENT_OVERHEAD_BYTES = 512;
/** PostgreSQL's default maintenance_work_mem. */
const MIN_BUILD_MEMORY_MB = 64;
/** A first-use build on a huge collection must not claim unbounded memory on a shared server. */
const MAX_BUILD_MEMORY_MB = 1024;

interface CollectionIndexes {
  /** Creates the collection's partial HNSW index unless it exists; checks the catalogue once per process. */
  ensure(db: Db, collection: string, shape: VectorShape): Promise<void>;
}

/**
 * One partial HNSW index per collection and dimension, created on the collection's first use. Creating it
 * when rows already exist (a bulk load, or an index dropped by hand) builds it in memory sized to the
 * collection, several times faster than a build that spills to disk.
 */
export function createCollectionIndexes(statistics: ChunkStatistics): CollectionIndexes {
  const ensured = new Set<string>();
  return {
    async ensure(db, collection, shape) {
      if (!shape.cosineOps) return; // too many dimensions for any HNSW index: exact search only
      const name = collectionIndexName(collection, shape.dimension);
      if (ensured.has(name)) return;
      if (!(await q.indexExists(db, name))) {
        const rows = await q.countCollectionChunks(db, collection);
        const neededMb = (rows * (shape.dimension * 4 + HNSW_ELEMENT_OVERHEAD_BYTES) * 1.3) / 2 ** 20;
        const maintenanceWorkMemMb = Math.min(MAX_BUILD_MEMORY_MB, Math.max(MIN_BUILD_MEMORY_MB, neededMb));
        try {
          await q.createCollectionIndex(db, { name, collection, shape, maintenanceWorkMemMb });
        } catch (error) {
          // Another process may have created it between our check and our CREATE (duplicate name in pg_class).
          if (!(await q.indexExists(db, name))) throw error;
        }
        // Rows loaded before the index existed may never have been counted; the planner needs them to pick it.
        if (rows > 0) await statistics.refresh(db);
      }
      ensured.add(name);
    },
  };
}
