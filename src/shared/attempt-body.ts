import type { Attempt, Delivery } from './types';

// A call's detail sends each delivery's body once, on the delivery: every retry and replay sends
// those bytes (DESIGN: a delivery carries everything it sends). An attempt carries `requestBody`
// only when it sent other bytes (a replay with an edited body, a probe's tampered request). Every
// reader of "what did this attempt send" asks here: the inspector, Copy as cURL, the receivers'
// screen, the HAR export. Exports written before issue 27 carry requestBody on every attempt; read
// here, they mean the same.

/** The bytes the attempt sent, as UTF-8 text. */
export function sentBody(delivery: Pick<Delivery, 'body'>, attempt: Pick<Attempt, 'requestBody'>): string {
  return attempt.requestBody ?? delivery.body;
}

/** Whether the attempt sent other bytes than its delivery's body (a replay with an edited body). */
export function sentOwnBody(delivery: Pick<Delivery, 'body'>, attempt: Pick<Attempt, 'requestBody'>): boolean {
  return attempt.requestBody !== undefined && attempt.requestBody !== delivery.body;
}
