/**
 * The UUID text form PostgreSQL's `uuid` type accepts from us. Comparing a `uuid` column with anything
 * else makes PostgreSQL throw ("invalid input syntax for type uuid"), which would surface as a 500; so
 * every lookup by a caller-supplied id checks it first and treats a malformed id as "not found".
 */
export const UUID_PATTERN = '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$';

const UUID = new RegExp(UUID_PATTERN);

export function isUuid(value: unknown): value is string {
  return typeof value === 'string' && UUID.test(value);
}
