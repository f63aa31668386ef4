import { api, type ApiErrorBody, type ApiHandlers, type OpInput, type OpName, type OpOutput } from '../../shared/api.contract';
import { ValidationError, parseOrThrow } from '../../shared/validation-error';
import { errorAnswer } from '../engine/errors';
import { hasUrlCredentials, maskUrlPassword } from '../../shared/url-credentials';
import { answerShapeProblem, OpTransportError, redirectedAway, refusalMessage, sendOp, type OpHttpAnswer } from '../http-op';

// The operations of the API contract the testing handle uses, in two ways: in the same process
// (startLab: the engine's handlers, input parsed with the op's schema as the control API does) or
// over the control API (connectLab: a running `webhook-lab serve` or desktop app).

export type LabApi = <K extends OpName>(name: K, input: OpInput<K>) => Promise<OpOutput<K>>;

/** An operation the lab refused or could not answer; `status` and `code` as the control API gives them. */
export class LabApiError extends Error {
  constructor(
    message: string,
    readonly status: number,
    readonly code: string | undefined,
  ) {
    super(message);
    this.name = 'LabApiError';
  }
}

export function inProcessApi(handlers: ApiHandlers): LabApi {
  return async (name, input) => {
    try {
      const parsed = parseOrThrow(api[name].input, input ?? {});
      const out = await (handlers[name] as (i: unknown) => unknown)(parsed);
      // A copy: what the test holds is its own, never an object the engine keeps (a source's cache).
      return structuredClone(out) as OpOutput<typeof name>;
    } catch (err) {
      if (err instanceof ValidationError) throw new LabApiError(`${name}: ${err.message}`, 400, 'invalid_input');
      const answer = errorAnswer(err);
      if (answer.status >= 500) throw err;
      throw new LabApiError(`${name}: ${answer.body.error}`, answer.status, answer.body.code);
    }
  };
}

/** The control API's root (no /api) from what connectLab was given: the `api:` line serve prints, with or without /api. */
export function apiRoot(apiUrl: unknown): string {
  if (typeof apiUrl !== 'string' || apiUrl === '') throw new TypeError('connectLab: apiUrl: give the control API URL (the "api:" line `webhook-lab serve` prints, e.g. http://127.0.0.1:8788/api)');
  // The UI's address (with ?token=…) works too: its query and fragment are not part of the root.
  const root = apiUrl.replace(/[?#].*$/s, '').replace(/\/+$/, '').replace(/\/api$/, '');
  if (!URL.canParse(root) || !/^https?:$/.test(new URL(root).protocol)) throw new TypeError(`connectLab: apiUrl: expected an http:// URL, got "${maskUrlPassword(apiUrl)}"`);
  if (hasUrlCredentials(root)) throw new TypeError(`connectLab: apiUrl: leave the user name and password out of the URL (give token): ${maskUrlPassword(apiUrl)}`);
  return root;
}

/** Where the caller gave the URL and token, for the hint of a 401: connectLab's options, or a command's flags. */
export interface GivenBy {
  token: string;
  url: string;
  /** What names the URL given: connectLab's apiUrl, or --api. */
  urlName: string;
}
const CONNECT_LAB: GivenBy = { token: 'the token given to connectLab', url: 'give connectLab that URL', urlName: 'apiUrl' };

export function httpApi(root: string, token: string, givenBy: GivenBy = CONNECT_LAB): LabApi {
  return async (name, input) => {
    let answer: OpHttpAnswer;
    try {
      answer = await sendOp(root, token, name, input);
    } catch (err) {
      if (!(err instanceof OpTransportError)) throw err;
      if (err.stage === 'connect') throw new LabApiError(`cannot reach the lab at ${maskUrlPassword(root)}/api (${err.why}); is webhook-lab serve running?`, 0, undefined);
      throw new LabApiError(`${err.method} ${maskUrlPassword(root)}${err.url.split('?')[0]}: ${err.why}`, 0, undefined);
    }
    const { res, text, json } = answer;
    if (json === undefined) {
      throw new LabApiError(`${answer.method} ${maskUrlPassword(root)}${answer.url.split('?')[0]} answered ${res.status}, not the control API's JSON; is ${givenBy.urlName} the "api:" line webhook-lab serve printed?`, res.status, undefined);
    }
    if (res.ok) {
      const problem = answerShapeProblem(name, json);
      if (problem) throw new LabApiError(`${answer.method} ${maskUrlPassword(root)}${answer.url.split('?')[0]} answered ${res.status} with JSON that is not the control API's answer (${problem}); is ${givenBy.urlName} the "api:" line webhook-lab serve printed?`, res.status, undefined);
      return json as OpOutput<typeof name>;
    }
    const away = res.status === 401 ? redirectedAway(root, res) : null;
    const hint = res.status !== 401 ? '' : away ? ` (redirected to ${maskUrlPassword(away)}, where the token is not sent on: ${givenBy.url})` : ` (check ${givenBy.token})`;
    throw new LabApiError(`${name}: ${refusalMessage(json, text.slice(0, 200))}${hint}`, res.status, (json as Partial<ApiErrorBody> | null)?.code);
  };
}
