// Which HTTP answers each destination retries, in one place so the two can be read side by side.
// Classic (SPEC §4; the dispatcher's classify.ts): 408, 429 and every 5xx; 5 s timeout.
// Webhooks (Actions) (issue 17, from Segment's docs on destination retries): 408, 423, 429 and
// every 5xx but 501 Not Implemented, which will not change on a retry; 10 s timeout, the default of
// actions-core's request client (packages/core/src/request-client.ts, DEFAULT_REQUEST_TIMEOUT).
// Timeouts and connection errors are retried by both; only the status rule differs. "5xx" is
// status >= 500, as classify.ts reads it, so an out-of-range status is treated alike by both.

export type RetryRule = 'classic' | 'actions';

export const CLASSIC_TIMEOUT_MS = 5_000;
export const ACTIONS_TIMEOUT_MS = 10_000;

export const TIMEOUT_MS: Readonly<Record<RetryRule, number>> = { classic: CLASSIC_TIMEOUT_MS, actions: ACTIONS_TIMEOUT_MS };

/** Classic: 408, 429, 5xx. */
export function classicRetriesStatus(status: number): boolean {
  return status === 408 || status === 429 || status >= 500;
}

/** Actions: 408, 423, 429, 5xx except 501. */
export function actionsRetriesStatus(status: number): boolean {
  if (status === 408 || status === 423 || status === 429) return true;
  return status >= 500 && status !== 501;
}

/** Whether `rule` retries a (non-2xx) answer with this status. */
export function retriesStatus(rule: RetryRule, status: number): boolean {
  return rule === 'actions' ? actionsRetriesStatus(status) : classicRetriesStatus(status);
}
