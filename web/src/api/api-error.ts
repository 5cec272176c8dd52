import type { ApiErrorBody } from './types';

/**
 * Codes the console invents when the server never produced an error body. They are translated in the UI;
 * server codes are not, because the server's `message` is already written for the user.
 */
export type ClientErrorCode = 'NETWORK_ERROR' | 'UNEXPECTED_RESPONSE';

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details: Record<string, unknown> = {},
  ) {
    super(message);
    this.name = 'ApiError';
  }

  get isClientSide(): boolean {
    return this.code === 'NETWORK_ERROR' || this.code === 'UNEXPECTED_RESPONSE';
  }
}

function isErrorBody(value: unknown): value is ApiErrorBody {
  if (typeof value !== 'object' || value === null) return false;
  const record = value as Record<string, unknown>;
  return typeof record.code === 'string' && typeof record.message === 'string';
}

/** Builds an ApiError from a failed response, keeping the server's own message when it sent one. */
export function toApiError(status: number, statusText: string, body: unknown): ApiError {
  if (isErrorBody(body)) {
    const details = typeof body.details === 'object' && body.details !== null ? body.details : {};
    return new ApiError(status, body.code, body.message, details);
  }
  return new ApiError(status, 'UNEXPECTED_RESPONSE', `HTTP ${status} ${statusText}`.trim());
}
