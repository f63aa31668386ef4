import type { z } from 'zod';
import type { ErrorCode } from './error-codes';

/** `sources[0].webhooks.urls[5]` from a zod path, the form every error message uses. */
export function formatPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const key of path) {
    if (typeof key === 'number') out += `[${key}]`;
    else out += out === '' ? String(key) : `.${String(key)}`;
  }
  return out;
}

export interface FieldError {
  path: string;
  message: string;
}

/** Problems named in one answer, at most: a body of a million bad items made an answer of 150 MB. */
export const MAX_FIELD_ERRORS = 100;

/** The first MAX_FIELD_ERRORS problems, and a last entry saying how many more there were. */
export function capFields(fields: FieldError[]): FieldError[] {
  // One over: a list capped already (its last entry the count) is left as it is.
  if (fields.length <= MAX_FIELD_ERRORS + 1) return fields;
  return [...fields.slice(0, MAX_FIELD_ERRORS), { path: '', message: `and ${fields.length - MAX_FIELD_ERRORS} more problems` }];
}

export function fieldErrors(error: z.ZodError, prefix: readonly PropertyKey[] = []): FieldError[] {
  return capFields(fieldsOf(error, prefix));
}

function fieldsOf(error: z.ZodError, prefix: readonly PropertyKey[]): FieldError[] {
  return error.issues.map((issue) => {
    const path = formatPath([...prefix, ...issue.path]);
    // zod names unknown keys in the message, not the path; put them in the path so typos are pointed at.
    if (issue.code === 'unrecognized_keys') {
      return issue.keys.map((k) => ({ path: formatPath([...prefix, ...issue.path, k]), message: 'unknown key' }));
    }
    return [{ path, message: issue.message }];
  }).flat();
}

/** One line per problem, `path: message`. */
export function describeErrors(errors: FieldError[]): string {
  return errors.map((e) => (e.path ? `${e.path}: ${e.message}` : e.message)).join('; ');
}

/** Thrown (and sent over HTTP/IPC as `{error, fields}`) when input fails its schema. */
export class ValidationError extends Error {
  readonly status = 400;
  readonly code: ErrorCode = 'invalid_input';
  readonly fields: FieldError[];
  constructor(fields: FieldError[]) {
    const capped = capFields(fields);
    super(describeErrors(capped));
    this.fields = capped;
    this.name = 'ValidationError';
  }
}

export function parseOrThrow<S extends z.ZodType>(schema: S, input: unknown, prefix: readonly PropertyKey[] = []): z.output<S> {
  const r = schema.safeParse(input);
  if (!r.success) throw new ValidationError(fieldErrors(r.error, prefix));
  return r.data;
}
