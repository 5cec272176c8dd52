/**
 * One error type for the whole platform. `code` is stable and is what clients branch on; `status` follows
 * from the code; the message says what happened and what to do next; `details` names the field, row or rule.
 */
const STATUS = {
  // A request that needs a setting nobody made yet (a project's REDCap API): the caller can fix it, so 4xx.
  CONFIG_MISSING: 409,
  CONFIG_INVALID: 500,
  VALIDATION_FAILED: 400,
  UNAUTHENTICATED: 401,
  FORBIDDEN: 403,
  /** Too many attempts of something guessable (sign-in codes) from one client; details.retryAfterSeconds says when to try again. */
  TOO_MANY_ATTEMPTS: 429,
  NOT_FOUND: 404,
  CONFLICT_STATE: 409,
  /** The embedded database folder is open in another process (a running server). */
  DATABASE_IN_USE: 409,
  SCENARIO_INVALID: 422,
  /** An agent definition (a scenario file or one declared in code) that the runtime cannot run as written. */
  AGENT_INVALID: 422,
  RULE_COMPILE_FAILED: 422,
  /** A hot-memory write that would take the project's memory over its token cap (MEMORY_HOT_MAX_TOKENS). */
  MEMORY_OVER_CAP: 422,
  SKILL_INVALID: 422,
  IMPORT_INVALID: 422,
  UPSTREAM_FAILED: 502,
  UNSUPPORTED_FILE: 415,
  UPLOAD_TOO_LARGE: 413,
  EMBEDDING_MISMATCH: 409,
  VECTOR_STORE_UNAVAILABLE: 503,
  LLM_NOT_CONFIGURED: 503,
  LLM_AUTH_FAILED: 502,
  LLM_RATE_LIMITED: 503,
  LLM_TIMEOUT: 504,
  LLM_UNAVAILABLE: 502,
  LLM_REQUEST_REJECTED: 502,
  LLM_BAD_RESPONSE: 502,
  EMBEDDING_FAILED: 502,
  /** The caller stopped the run (closed the stream, pressed Stop); 499 as nginx logs a client that went away. */
  CANCELLED: 499,
  INTERNAL: 500,
} as const;

export type ErrorCode = keyof typeof STATUS;

const MARKER = Symbol.for('clinagent.error');

export class ClinAgentError extends Error {
  readonly status: number;
  readonly [MARKER] = true;

  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details: Record<string, unknown> = {},
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = 'ClinAgentError';
    this.status = STATUS[code];
  }

  /** Works across duplicate copies of the package, where `instanceof` would not. */
  static isInstance(error: unknown): error is ClinAgentError {
    return typeof error === 'object' && error !== null && (error as Record<symbol, unknown>)[MARKER] === true;
  }

  toJSON(): { code: ErrorCode; message: string; details: Record<string, unknown> } {
    return { code: this.code, message: this.message, details: this.details };
  }
}

export function statusOf(code: ErrorCode): number {
  return STATUS[code];
}

/** Formats zod-style issues as one `path: message` line each; a model or a user can fix each line. */
export function formatIssues(issues: ReadonlyArray<{ path: ReadonlyArray<PropertyKey>; message: string }>): string[] {
  return issues.map((issue) => `${issue.path.length ? issue.path.map(String).join('.') : '(root)'}: ${issue.message}`);
}

export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
