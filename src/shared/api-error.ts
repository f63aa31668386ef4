import type { ApiErrorBody } from './api.contract';
import type { FieldError } from './validation-error';

/** What every transport (HTTP, IPC) throws to the renderer when an operation fails. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly fields: FieldError[] = [],
  ) {
    super(message);
    this.name = 'ApiError';
  }

  static fromBody(status: number, body: Partial<ApiErrorBody> | null | undefined): ApiError {
    return new ApiError(status, body?.error ?? `request failed with status ${status}`, body?.fields ?? []);
  }

  /** The message for one field path (e.g. `webhooks.urls[1].url`), for showing errors on the field. */
  fieldMessage(path: string): string | undefined {
    return this.fields.find((f) => f.path === path)?.message;
  }
}
