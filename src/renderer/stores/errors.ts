import { ApiError } from '../../shared/api-error';

/** A sentence a person can act on, whatever was thrown. */
export function errorText(err: unknown): string {
  if (err instanceof ApiError) {
    if (err.code === 'unauthorized') return 'Not authorized: the access token is missing or wrong. Reopen the "ui:" address printed by the server.';
    if (err.fields.length && !err.message) return err.fields.map((f) => `${f.path}: ${f.message}`).join('; ');
    return err.message;
  }
  if (err instanceof Error) return err.message;
  return String(err);
}

export function asApiError(err: unknown): ApiError {
  return err instanceof ApiError ? err : new ApiError(0, errorText(err));
}
