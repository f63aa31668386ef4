// What went wrong, as a word a program can branch on, with the HTTP status each is answered with.
// The engine's errors carry one (src/main/engine/errors.ts); the control API and IPC send it as
// ApiErrorBody.code, and the renderer's ApiError keeps it. Messages are for people and may change;
// codes are not reworded.

export const ERROR_STATUS = {
  /** The input failed its schema or a rule about it (fields name where). */
  invalid_input: 400,
  /** No or a wrong access token (control API). */
  unauthorized: 401,
  /** The request came from somewhere the control API does not answer (host, origin). */
  forbidden: 403,
  /** The thing named does not exist (or no longer does), including an unknown operation. */
  not_found: 404,
  /** The request is well formed but the current state refuses it: a name taken, nothing to send, already running. */
  conflict: 409,
  /** The request body is larger than the server takes. */
  too_large: 413,
  /** The client's queue is full: try again later. */
  rate_limited: 429,
  /** A bug or an unexpected failure in the engine. */
  internal: 500,
  /** The engine cannot do this now (its storage is failing: a full disk, a read-only folder); try again later. */
  unavailable: 503,
  /** Never sent by the engine: the renderer's own, when no answer came at all (status 0). */
  unreachable: 0,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

const BY_STATUS = new Map<number, ErrorCode>(Object.entries(ERROR_STATUS).map(([code, status]) => [status, code as ErrorCode]));

export function isErrorCode(v: unknown): v is ErrorCode {
  return typeof v === 'string' && Object.prototype.hasOwnProperty.call(ERROR_STATUS, v);
}

/** The code for an error that came with a status only (a framework's 4xx, an older server's answer). */
export function codeOfStatus(status: number): ErrorCode {
  const known = BY_STATUS.get(status);
  if (known) return known;
  if (status >= 500) return 'internal';
  // Any other 4xx (405, 415, ...) is something about the request itself.
  return status >= 400 ? 'invalid_input' : 'unreachable';
}
