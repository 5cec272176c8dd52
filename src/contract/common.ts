import { z } from 'zod';

/**
 * The UUID text form PostgreSQL's `uuid` type accepts. The same string as core/ids.ts UUID_PATTERN (the
 * contract imports nothing of the server; src/http/contract-agreement.test.ts holds the two equal): the
 * error handler recognises it in ajv's report and answers "must be a UUID such as ...".
 */
export const UUID_PATTERN = '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$';

/** A string that must be a UUID: refused with 400 before it can reach a `uuid` column (where PostgreSQL would throw). */
export const Uuid = z.string().regex(new RegExp(UUID_PATTERN)).describe('a UUID, e.g. 3f0c1a9e-5b7d-4c2e-9a41-0d6b8e2f7c13');

/**
 * Largest page offset accepted. "1e99" passes as an integer, and PostgreSQL refuses an OFFSET beyond bigint;
 * no project has two billion rows to page through.
 */
export const MAX_OFFSET = 2_147_483_647;

/**
 * How long text the API stores or looks up may be. Without a limit a 1 MB project name or URL was stored
 * and then sent back in every list; these are generous for what each field holds, and a longer value is
 * refused with 400 naming the field and the limit ("body.name: must NOT have more than 200 characters").
 */
const TEXT_LIMITS = {
  /** Ids of our own or REDCap's making: skill, scenario, user, record (REDCap's record column is 100 wide). */
  id: 100,
  /** Names, titles, labels, filter values (a site, a field name). */
  name: 200,
  /** URLs (browsers and servers commonly stop near 2000 characters). */
  url: 2000,
} as const;

/** An id a client sends: required, at most TEXT_LIMITS.id characters. */
export const IdText = z.string().min(1).max(TEXT_LIMITS.id);
/** A name, title, label or filter value: at most TEXT_LIMITS.name characters. */
export const NameText = z.string().max(TEXT_LIMITS.name);

/** An object whose keys the contract does not fix (a model's structured output, an import summary). */
export const OpenObject = z.looseObject({});
export type OpenObject = z.infer<typeof OpenObject>;

/** Every non-2xx body the server sends. `code` is what clients branch on; `message` says what to do next. */
export const ApiErrorBody = z.object({
  code: z.string().describe('stable error code, e.g. VALIDATION_FAILED, NOT_FOUND, FORBIDDEN'),
  message: z.string().describe('what happened and what to do next, written for the user'),
  details: OpenObject.optional().describe('the field, row or rule concerned; for VALIDATION_FAILED, `problems` lists each "path: message"'),
});
export type ApiErrorBody = z.infer<typeof ApiErrorBody>;

/** The error statuses every route but GET /api/health declares. */
export const errorResponses = {
  400: ApiErrorBody,
  401: ApiErrorBody,
  403: ApiErrorBody,
  404: ApiErrorBody,
  409: ApiErrorBody,
  500: ApiErrorBody,
} as const;

/** The body of 204 No Content. */
export const NoContent = z.null();

/** Params of a route whose named params are all UUIDs. */
export function uuidParams<const K extends string>(...names: K[]) {
  return z.object(Object.fromEntries(names.map((name) => [name, Uuid])) as Record<K, typeof Uuid>);
}

/** Params of a route whose named params are free text (project ids, record ids, document ids). */
export function textParams<const K extends string>(...names: K[]) {
  return z.object(Object.fromEntries(names.map((name) => [name, z.string()])) as Record<K, z.ZodString>);
}
