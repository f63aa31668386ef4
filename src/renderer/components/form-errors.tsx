import type { ApiError } from '../../shared/api-error';

/**
 * Errors a form cannot show on one of its own fields: field errors for paths it has no input for,
 * else the error's message when it names no field at all.
 */
export function FormErrors({ fields, error }: { fields: { path: string; message: string }[]; error: ApiError | null | undefined }) {
  if (fields.length) {
    return (
      <div className="notice error" role="alert">
        {fields.map((f) => `${f.path}: ${f.message}`).join('; ')}
      </div>
    );
  }
  if (error && !error.fields.length) {
    return (
      <div className="notice error" role="alert">
        {error.message}
      </div>
    );
  }
  return null;
}
