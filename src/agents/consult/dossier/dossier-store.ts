import { desc, eq } from 'drizzle-orm';
import type { Db } from '../../../core/db/connect.js';
import { consultDossiers } from '../../../core/db/schema/consult.js';
import { isUuid } from '../../../core/ids.js';
import type { DossierContent } from './build-dossier.js';

export interface StoredDossier {
  dossierId: string;
  runId: string;
  userId: string;
  content: DossierContent;
  createdAt: Date;
}

export interface DossierStore {
  save(input: { runId: string; userId: string; content: DossierContent }): Promise<{ dossierId: string; createdAt: Date }>;
  /** The consult's newest dossier; a consult may generate one again as it learns more. */
  latest(runId: string): Promise<StoredDossier | undefined>;
  get(dossierId: string): Promise<StoredDossier | undefined>;
}

const columns = {
  dossierId: consultDossiers.id,
  runId: consultDossiers.runId,
  userId: consultDossiers.userId,
  content: consultDossiers.content,
  createdAt: consultDossiers.createdAt,
};

type Row = { [K in keyof typeof columns]: (typeof columns)[K]['_']['data'] };

// The column holds what save() wrote, a DossierContent; json columns are typed as open objects.
const toDossier = (row: Row): StoredDossier => ({ ...row, content: row.content as unknown as DossierContent });

/**
 * Dossiers of consults, one row per generation (a later one does not replace an earlier one, which the model and
 * the patient may already have seen). Deleted with the consult's run. Ownership is the caller's check: the HTTP
 * routes compare `userId` and answer 404 to anyone else.
 */
export function createDossierStore(db: Db, now: () => Date = () => new Date()): DossierStore {
  return {
    async save({ runId, userId, content }) {
      const [row] = await db
        .insert(consultDossiers)
        .values({ runId, userId, content: content as unknown as Record<string, unknown>, createdAt: now() })
        .returning({ dossierId: consultDossiers.id, createdAt: consultDossiers.createdAt });
      return row!;
    },

    async latest(runId) {
      // A malformed id would make PostgreSQL throw on the uuid comparison; it names no dossier.
      if (!isUuid(runId)) return undefined;
      const [row] = await db.select(columns).from(consultDossiers).where(eq(consultDossiers.runId, runId)).orderBy(desc(consultDossiers.createdAt)).limit(1);
      return row && toDossier(row);
    },

    async get(dossierId) {
      if (!isUuid(dossierId)) return undefined;
      const [row] = await db.select(columns).from(consultDossiers).where(eq(consultDossiers.id, dossierId));
      return row && toDossier(row);
    },
  };
}
