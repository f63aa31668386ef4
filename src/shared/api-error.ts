import type { ApiErrorBody } from './api.contract';
import { codeOfStatus, isErrorCode, type ErrorCode } from './error-codes';
import type { FieldError } from './validation-error';

/** What every transport (HTTP, IPC) throws to the renderer when an operation fails. */
export class ApiError extends Error {
  readonly code: ErrorCode;
  constructor(
    readonly status: number,
    message: string,
    readonly fields: FieldError[] = [],
    /** The engine's code when it sent one; else the status's own (0, no answer at all: 'unreachable'). */
    code?: ErrorCode,
  ) {
    super(message);
    this.name = 'ApiError';
    this.code = code ?? codeOfStatus(status);
  }

  static fromBody(status: number, body: Partial<ApiErrorBody> | null | undefined): ApiError {
    const code = isErrorCode(body?.code) ? body.code : undefined;
    return new ApiError(status, body?.error ?? `request failed with status ${status}`, body?.fields ?? [], code);
  }

  /** The message for one field path (e.g. `webhooks.urls[1].url`), for showing errors on the field. */
  fieldMessage(path: string): string | undefined {
    return this.fields.find((f) => f.path === path)?.message;
  }
}
