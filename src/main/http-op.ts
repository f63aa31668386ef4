import { api, type ApiErrorBody, type OpInput, type OpName } from '../shared/api.contract';
import { toHttpRequest } from '../shared/http-mapping';

// One operation of the API contract sent to a running lab's control API (the same mapping as the
// server's routes), as `webhook-lab check` and the testing module's connectLab send it: the bearer
// token, a time limit on the answer and its body, and the body read as JSON when it is JSON. Each
// caller words what went wrong for its own users (a CLI flag, a function's argument).

/** The limit on an answer, and again on its body. */
export const REQUEST_TIMEOUT_MS = 10_000;

/** No answer (`connect`: refused, unreachable, the time limit) or an answer whose body did not arrive (`body`). */
export class OpTransportError extends Error {
  constructor(
    readonly stage: 'connect' | 'body',
    /** Why, in a few words: the time limit, or the error's code or message. */
    readonly why: string,
    /** The request's method and path below the root. */
    readonly method: string,
    readonly url: string,
    /** The answer whose body did not arrive (stage `body`). */
    readonly res?: Response,
  ) {
    super(why);
  }
}

export interface OpHttpAnswer {
  method: string;
  /** The request's path and query below the root. */
  url: string;
  res: Response;
  text: string;
  /** The body as JSON; undefined when it is not JSON. */
  json: unknown;
}

export async function sendOp<K extends OpName>(root: string, token: string, name: K, input: OpInput<K>): Promise<OpHttpAnswer> {
  const req = toHttpRequest(api[name], (input ?? {}) as Record<string, unknown>);
  let res: Response;
  try {
    res = await fetch(root + req.url, {
      method: req.method,
      headers: { authorization: `Bearer ${token}`, ...(req.body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: req.body,
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    });
  } catch (err) {
    const e = err as Error & { cause?: { code?: string; message?: string; errors?: { code?: string }[] } };
    const why = e.name === 'TimeoutError' ? `no answer within ${REQUEST_TIMEOUT_MS / 1000} s` : (e.cause?.code ?? e.cause?.errors?.[0]?.code ?? e.cause?.message ?? e.message);
    throw new OpTransportError('connect', why, req.method, req.url);
  }
  let text: string;
  try {
    text = await res.text();
  } catch (err) {
    const e = err as Error;
    throw new OpTransportError('body', e.name === 'TimeoutError' ? `the answer did not finish within ${REQUEST_TIMEOUT_MS / 1000} s` : e.message, req.method, req.url, res);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { method: req.method, url: req.url, res, text, json };
}

/**
 * Where an answer came from when a redirect led to another origin: fetch does not send the
 * Authorization header on there, so a 401 from it says nothing about the token. Null otherwise.
 */
export function redirectedAway(root: string, res: Response): string | null {
  return res.redirected && new URL(res.url).origin !== new URL(root).origin ? res.url.split('?')[0]! : null;
}

/** A refusal's words: its field errors (`path: message`), else its `error`, else `fallback`. */
export function refusalMessage(json: unknown, fallback: string): string {
  const e = json as Partial<ApiErrorBody> | null;
  return e?.fields?.length ? e.fields.map((f) => `${f.path}: ${f.message}`).join('; ') : typeof e?.error === 'string' ? e.error : fallback;
}

/** A 2xx answer checked against its operation's declared shape (api.contract.ts): what differs first, or null. */
export function answerShapeProblem(name: OpName, json: unknown): string | null {
  const r = api[name].output.safeParse(json);
  if (r.success) return null;
  const issue = r.error.issues[0]!;
  return issue.path.length > 0 ? `"${issue.path.join('.')}": ${issue.message}` : issue.message;
}
