import { asc, desc, sql, type AnyColumn, type SQL } from 'drizzle-orm';

/**
 * Record ids in the order people count them, not as text: 2, 10, 16, 108 (text order gives 10, 108, 16, 2), and
 * S9 before S10 whatever the zero padding. The id is split into its text before a trailing number and that number;
 * the text, then the number (as numeric, so any length compares), then the whole id in byte order break ties.
 * Works on PGlite and PostgreSQL alike (regexp_replace, substring with a POSIX pattern, numeric casts).
 */
export function naturalRecordOrder(column: AnyColumn | SQL, order: 'asc' | 'desc' = 'asc'): SQL[] {
  const direction = order === 'asc' ? asc : desc;
  return [
    direction(sql`regexp_replace(${column}, '[0-9]+$', '') COLLATE "C"`),
    direction(sql`NULLIF(substring(${column} from '([0-9]+)$'), '')::numeric`),
    direction(sql`${column} COLLATE "C"`),
  ];
}
