import type { FastifyRequest } from 'fastify';
import { ClinAgentError } from '../core/errors.js';

/** An uploaded file as routes receive it in `request.body`: the user's file name and its bytes. */
export interface Upload {
  filename: string;
  data: Buffer;
}

interface UploadLimits {
  /** Bytes per file (UPLOAD_MAX_BYTES). */
  maxFileBytes: number;
  /** Bytes of all files of one request together (UPLOAD_MAX_TOTAL_BYTES). */
  maxTotalBytes: number;
}

/**
 * Limits busboy enforces while it reads the stream, before anything is buffered. A route that takes more
 * files raises `files` in its `config.multipartOptions.limits`. Form fields carry ids and names only;
 * content goes in file parts.
 */
export const FORM_LIMITS = { files: 1, fields: 20, fieldSize: 64 * 1024, fieldNameSize: 100, parts: 40, headerPairs: 100 } as const;

// Boundaries and part headers around the files; a request declaring more than this over the total is refused unread.
const FORM_OVERHEAD_BYTES = FORM_LIMITS.fields * FORM_LIMITS.fieldSize + 64 * 1024;

/** The options to register @fastify/multipart with, so busboy enforces the per-file size while streaming. */
export function multipartPluginOptions(limits: UploadLimits) {
  return { limits: { ...FORM_LIMITS, fileSize: limits.maxFileBytes } };
}

/**
 * Reads a multipart body into `{ field: value | Upload }` (the shape routes had with attachFieldsToBody
 * "keyValues"), streaming each file and counting its bytes as they arrive, so an over-limit upload is cut
 * off and answered 413 with what to do, and a large one never holds up other requests: nothing here
 * blocks the event loop, chunks are only collected.
 */
export function readMultipartBody(limits: UploadLimits) {
  return async function multipartBody(request: FastifyRequest): Promise<void> {
    if (!request.isMultipart()) return;
    const declared = Number(request.headers['content-length']);
    if (Number.isFinite(declared) && declared > limits.maxTotalBytes + FORM_OVERHEAD_BYTES) {
      throw tooLarge(`This upload is ${megabytes(declared)}, more than the ${megabytes(limits.maxTotalBytes)} allowed for all files of one request (UPLOAD_MAX_TOTAL_BYTES). Send fewer or smaller files, or ask the server's operator to raise UPLOAD_MAX_TOTAL_BYTES.`, { limit: limits.maxTotalBytes, size: declared });
    }
    const routeOptions = (request.routeOptions.config as { multipartOptions?: { limits?: Partial<typeof FORM_LIMITS> } }).multipartOptions;
    const effective = { ...FORM_LIMITS, ...routeOptions?.limits };
    const body: Record<string, string | Upload> = {};
    let total = 0;
    try {
      for await (const part of request.parts(routeOptions)) {
        if (Object.hasOwn(body, part.fieldname)) {
          throw new ClinAgentError('VALIDATION_FAILED', `The form field "${part.fieldname}" was sent twice; send it once.`, { field: part.fieldname });
        }
        if (part.type === 'field') {
          if (part.valueTruncated) {
            throw tooLarge(`The form field "${part.fieldname}" is longer than ${kilobytes(effective.fieldSize)}; form fields carry ids and names, send content as a file.`, { field: part.fieldname, limit: effective.fieldSize });
          }
          body[part.fieldname] = String(part.value);
          continue;
        }
        const chunks: Buffer[] = [];
        // Busboy marks the file truncated and skips the rest of it; stop at once and answer instead.
        part.file.once('limit', () => part.file.destroy(fileTooLarge(part.fieldname, part.filename, limits.maxFileBytes)));
        for await (const chunk of part.file as AsyncIterable<Buffer>) {
          total += chunk.length;
          if (total > limits.maxTotalBytes) {
            throw tooLarge(`The files of this request are larger than ${megabytes(limits.maxTotalBytes)} together (UPLOAD_MAX_TOTAL_BYTES); "${part.filename}" went over it. Send fewer or smaller files, or ask the server's operator to raise UPLOAD_MAX_TOTAL_BYTES.`, { field: part.fieldname, limit: limits.maxTotalBytes });
          }
          chunks.push(chunk);
        }
        if (part.file.truncated) throw fileTooLarge(part.fieldname, part.filename, limits.maxFileBytes);
        body[part.fieldname] = { filename: part.filename, data: Buffer.concat(chunks) };
      }
    } catch (error) {
      stopReading(request);
      throw explain(error, effective, limits);
    }
    request.body = body;
  };
}

/** Stops parsing and lets the rest of the request body drain, so the 413 answer reaches the client. */
function stopReading(request: FastifyRequest): void {
  request.raw.unpipe();
  request.raw.resume();
}

function explain(error: unknown, effective: typeof FORM_LIMITS, limits: UploadLimits): ClinAgentError {
  if (ClinAgentError.isInstance(error)) return error;
  const { code, part } = error as { code?: string; part?: { fieldname?: string; filename?: string } };
  switch (code) {
    case 'FST_REQ_FILE_TOO_LARGE':
      return fileTooLarge(part?.fieldname ?? 'file', part?.filename ?? '', limits.maxFileBytes);
    case 'FST_FILES_LIMIT':
      return tooLarge(`This request carries more than ${effective.files} file${effective.files === 1 ? '' : 's'}; this route takes at most ${effective.files}. Send only the files it asks for.`, { limit: effective.files });
    case 'FST_FIELDS_LIMIT':
      return tooLarge(`This request carries more than ${effective.fields} form fields; send only the fields the route asks for.`, { limit: effective.fields });
    case 'FST_PARTS_LIMIT':
      return tooLarge(`This request has more than ${effective.parts} parts; send only the files and fields the route asks for.`, { limit: effective.parts });
    default:
      // Busboy's own words ("Unexpected end of form", "Malformed part header") for a broken or cut-off body.
      return new ClinAgentError('VALIDATION_FAILED', `The multipart body could not be read (${(error as Error)?.message ?? String(error)}). Send it again as multipart/form-data; if it was cut off, check the connection.`, {});
  }
}

function fileTooLarge(field: string, filename: string, limit: number): ClinAgentError {
  return tooLarge(`The file ${filename ? `"${filename}" ` : ''}sent as "${field}" is larger than ${megabytes(limit)}, the limit per file (UPLOAD_MAX_BYTES). Split it (a REDCap export by site, form or event), or ask the server's operator to raise UPLOAD_MAX_BYTES.`, { field, limit });
}

function tooLarge(message: string, details: Record<string, unknown>): ClinAgentError {
  return new ClinAgentError('UPLOAD_TOO_LARGE', message, details);
}

function megabytes(bytes: number): string {
  if (bytes < 1024 * 1024) return kilobytes(bytes);
  const mb = bytes / (1024 * 1024);
  return `${Number.isInteger(mb) ? mb : mb.toFixed(1)} MB`;
}

function kilobytes(bytes: number): string {
  const kb = bytes / 1024;
  return `${Number.isInteger(kb) ? kb : kb.toFixed(1)} KB`;
}
