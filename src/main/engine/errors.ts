import type { ApiErrorBody } from '../../shared/api.contract';
import { codeOfStatus, ERROR_STATUS, isErrorCode, type ErrorCode } from '../../shared/error-codes';
import type { FieldError } from '../../shared/validation-error';
import { describeStorageError, isStorageError } from './store/storage-health';

// The engine's errors and the one mapping from anything thrown to what a caller is answered with.
// The control API (server/api-routes.ts) and IPC (ipc/ipc-core.ts) both answer through errorAnswer,
// so the same failure carries the same status, code and message on either transport.

/** A failure the caller caused or can act on: a status to answer with and a code to branch on. */
export class HttpError extends Error {
  readonly code: ErrorCode;
  constructor(
    readonly status: number,
    message: string,
    /** Defaults to the status's own code (404 → not_found, 409 → conflict, ...). */
    code?: ErrorCode,
  ) {
    super(message);
    this.name = 'HttpError';
    this.code = code ?? codeOfStatus(status);
  }
}

/** An HttpError named by its code; the status is the code's own. */
export const codedError = (code: ErrorCode, message: string) => new HttpError(ERROR_STATUS[code], message, code);

export const notFound = (what: string) => codedError('not_found', `not found: ${what}`);
export const conflict = (message: string) => codedError('conflict', message);
export const invalidInput = (message: string) => codedError('invalid_input', message);

export interface ErrorAnswer {
  status: number;
  body: ApiErrorBody & { code: ErrorCode };
}

/**
 * What a thrown value is answered with: HttpError and ValidationError carry status, code and maybe
 * fields; a framework error its `statusCode` (a 4xx only: its 5xx are our failure); anything else is
 * a 500 'internal'. Duck-typed, so errors from other modules (zod, Fastify) need no wrapping.
 */
export function errorAnswer(err: unknown): ErrorAnswer {
  if (typeof err !== 'object' || err === null) return answer(500, String(err), undefined, undefined);
  // A write that failed for lack of space or a read-only folder: the caller may try again later.
  if (isStorageError(err)) return answer(503, `the lab cannot write its data now: ${describeStorageError(err)}`, 'unavailable', undefined);
  const e = err as { status?: unknown; statusCode?: unknown; message?: unknown; code?: unknown; fields?: unknown };
  const status = isHttpStatus(e.status, 599) ? e.status : isHttpStatus(e.statusCode, 499) ? e.statusCode : 500;
  const message = typeof e.message === 'string' && e.message ? e.message : 'operation failed';
  // A code only counts when it is one of ours and agrees with the status; Node's (ENOENT) and
  // Fastify's (FST_ERR_...) codes are not, and the status decides.
  const code = isErrorCode(e.code) && ERROR_STATUS[e.code] === status ? e.code : undefined;
  return answer(status, message, code, Array.isArray(e.fields) ? (e.fields as FieldError[]) : undefined);
}

function answer(status: number, message: string, code: ErrorCode | undefined, fields: FieldError[] | undefined): ErrorAnswer {
  const body: ErrorAnswer['body'] = { error: message, code: code ?? codeOfStatus(status) };
  if (fields?.length) body.fields = fields;
  return { status, body };
}

function isHttpStatus(v: unknown, max: number): v is number {
  return typeof v === 'number' && Number.isInteger(v) && v >= 400 && v <= max;
}
