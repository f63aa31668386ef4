import type { AttemptTrigger, Settings, Source } from '../../../shared/types';
import { scheduleRetryRule, scheduleTimeoutMs } from '../../../shared/retry-schedule';
import { ACTIONS_TIMEOUT_MS, type RetryRule } from '../../../shared/actions/retry-classes';
import { buildActionsRequestHeaders, buildRequestHeaders } from '../../../shared/webhook-request';
import { currentActionsRequest, currentRequest, standardWebhooksFor } from './request-headers';
import { newWebhookId } from '../../../shared/webhook-id';
import { mappingBatches, mappingNamed } from '../../../shared/actions/mode';
import { classify, type Classification } from './classify';
import { failureFacts } from './send-errors';
import type { HttpSender, SendResult } from './http-sender';
import type { ActiveDelivery, NewAttempt, SigningSecrets, StandardWebhooksRef } from '../store/delivery.types';
import type { RoundAnswers } from '../store/delivery-transition';

export interface RoundResult extends RoundAnswers {
  /** Per attempt, how long its URL waited for a slot in its lane before it was sent (ms; 0 for a scheduled round's). */
  waitedMs?: number[];
}

/** How a delivery's attempts are sent and judged: Actions deliveries by Actions' rules, Classic by the retry schedule's. */
export function sendingRules(d: Pick<ActiveDelivery, 'kind' | 'timeoutMs'>, settings: Settings): { timeoutMs: number; rule: RetryRule } {
  if (d.kind === 'actions') return { timeoutMs: d.timeoutMs ?? ACTIONS_TIMEOUT_MS, rule: 'actions' };
  return { timeoutMs: d.timeoutMs ?? scheduleTimeoutMs(settings.retrySchedule), rule: scheduleRetryRule(settings.retrySchedule) };
}

/** What one round sends: which URLs of which delivery, why, and with what. */
export interface RoundRequest {
  sender: HttpSender;
  d: ActiveDelivery;
  urlIndexes: number[];
  /** The source as it is now (undefined once deleted): a manual or replay round signs with its secrets. */
  source: Source | undefined;
  settings: Settings;
  secrets: SigningSecrets;
  /** The round's number, as recorded on its attempts. */
  round: number;
  trigger: AttemptTrigger;
  now: () => number;
  /** Sent in place of the delivery's body (an edited replay, a probe's tampered body). */
  body?: Buffer;
  /**
   * Each URL as it answers, before the round is over (what the inspector shows in flight), with its
   * attempt and its judgement: the same objects the round returns and records when it ends.
   */
  onAnswer?: (urlIndex: number, r: SendResult, c: Classification, attempt: NewAttempt) => void;
  /**
   * A slot in the URL's lane, waited for before it is sent and given back as it answers (rounds the
   * schedule did not admit: lane-scheduler.ts). A scheduled round's slots were taken when it was admitted.
   */
  slot?: (url: string) => Promise<() => void>;
}

/**
 * Sends one round: every given URL in parallel, the same bytes, each with its own static headers,
 * with the delivery's method. A scheduled round resends the delivery's own request (User-Agent and
 * X-Signature fixed at creation, Standard Webhooks id and secret version fixed); a manual or replay
 * round is the one way to send with the source's current secrets and settings. Standard Webhooks
 * headers are signed per attempt, with the attempt's own timestamp, by the secrets `secrets` gives
 * for the version at that time (several during a rotation window: request-headers.ts). A URL that
 * waited for its lane's slot is timed from when it got one (`waitedMs` says how long it waited).
 */
export async function sendRound(q: RoundRequest): Promise<RoundResult> {
  const { sender, d, source, settings, secrets, round, trigger, now, onAnswer, slot } = q;
  const bodyOverride = q.body;
  const body = bodyOverride ?? d.body;
  const actions = d.kind === 'actions';
  // A scheduled round and a receiver check's request (made as the check means it) send the request as
  // it was made; so does a manual round of a deleted source's delivery (manual-rounds.ts allows it
  // only where that loses nothing: resendableWithoutSource).
  const scheduled = trigger === 'scheduled' || trigger === 'probe';
  const asCreated = scheduled || (source === undefined && bodyOverride === undefined);
  const { userAgent, signature } = asCreated && d.frozen ? d.frozen
    : actions ? currentActionsRequest(source?.webhooks.sharedSecret, body, isBatch(d, source))
    : currentRequest(settings.userAgentProduct, source?.webhooks.sharedSecret, body);
  const sw = scheduled ? d.standardWebhooks : currentStandardWebhooks(d, source);
  const { timeoutMs, rule } = sendingRules(d, settings);
  const build = actions ? buildActionsRequestHeaders : buildRequestHeaders;
  const settled = await Promise.allSettled(
    q.urlIndexes.map(async (i) => {
      const target = d.urls[i];
      const asked = now();
      const release = slot ? await slot(target.url) : undefined;
      try {
        const at = now();
        const standardWebhooks = standardWebhooksFor(sw && { id: sw.id, secrets: secrets(d.sourceId, sw.version, at) }, body, at);
        const headers = build({ userAgent, signature, urlHeaders: target.headers, body, standardWebhooks });
        const r = await sender.send({ url: target.url, method: d.method, headers, body, timeoutMs });
        release?.();
        // Judged once, as it answers: what the inspector shows in flight is what the round records.
        const c = classify(r, now(), rule);
        const attempt = attemptOfRound(d, round, i, target.url, trigger, headers, bodyOverride, signature, r, c, timeoutMs);
        onAnswer?.(i, r, c, attempt);
        return { c, attempt, waitedMs: Math.max(0, at - asked) };
      } finally {
        release?.();
      }
    }),
  );
  // A URL refused its slot (the lab stopping) fails the round, once every other URL of it has ended:
  // nothing of the round is still on the wire when its caller counts it over.
  const refused = settled.find((x) => x.status === 'rejected');
  if (refused) throw refused.reason;
  const results = settled.flatMap((x) => (x.status === 'fulfilled' ? [x.value] : []));
  const attempts = results.map((x) => x.attempt);
  const classifications = results.map((x) => x.c);
  const waitedMs = results.map((x) => x.waitedMs);
  return { attempts, classifications, waitedMs };
}

/** One URL's attempt of a round: an Actions attempt records every header that went out, the two the HTTP client adds included. */
function attemptOfRound(
  d: ActiveDelivery,
  round: number,
  urlIndex: number,
  url: string,
  trigger: AttemptTrigger,
  headers: Record<string, string>,
  bodyOverride: Buffer | undefined,
  signature: string | null,
  r: SendResult,
  c: Classification,
  timeoutMs: number,
): NewAttempt {
  const sent = d.kind === 'actions' ? withClientHeaders(headers, url) : headers;
  return toAttempt(d.id, round, urlIndex, url, trigger, sent, bodyOverride && !bodyOverride.equals(d.body) ? bodyOverride : null, signature, r, c, timeoutMs);
}

/**
 * A manual or replay round's Standard Webhooks: the source's current secret version (none now: no
 * such headers), under the delivery's own webhook-id (it names the message) or, for a delivery made
 * while the source had no secret, a new one.
 */
function currentStandardWebhooks(d: ActiveDelivery, source: Source | undefined): StandardWebhooksRef | null {
  if (!source?.webhooks.standardWebhooksSecret) return null;
  return { id: d.standardWebhooks?.id ?? newWebhookId(), version: source.secretVersions?.standardWebhooksSecret?.version ?? null };
}

/**
 * Whether an Actions delivery's body is a batch array (its X-Signature then covers the first item):
 * it carried several calls, or its mapping (as configured now) batches. A batch of one is an array
 * too, and a single call's data may itself be an array, so the body's shape alone cannot tell.
 */
function isBatch(d: ActiveDelivery, source: Source | undefined): boolean {
  if (d.itemCount > 1) return true;
  const mapping = source && mappingNamed(source.webhooks, d.mapping);
  return mapping !== undefined && mappingBatches(mapping);
}

/** The headers undici adds to every request: host (the URL's host and port) and connection (keep-alive). */
function withClientHeaders(headers: Record<string, string>, url: string): Record<string, string> {
  let host: string;
  try {
    host = new URL(url).host;
  } catch {
    return headers;
  }
  return { ...headers, host, connection: 'keep-alive' };
}

function toAttempt(
  deliveryId: number,
  round: number,
  urlIndex: number,
  url: string,
  trigger: AttemptTrigger,
  requestHeaders: Record<string, string>,
  body: Buffer | null,
  signature: string | null,
  r: SendResult,
  c: Classification,
  timeoutMs: number,
): NewAttempt {
  return {
    deliveryId,
    round,
    urlIndex,
    url,
    trigger,
    startedAt: r.startedAt,
    durationMs: r.durationMs,
    requestHeaders,
    body,
    signature,
    responseStatus: r.status,
    responseHeaders: r.responseHeaders,
    responseBody: r.responseBody,
    responseTruncated: r.responseTruncated,
    errorCode: r.errorCode,
    errorMessage: r.errorMessage ?? (c.outcome === 'success' ? null : c.reason),
    timedOut: r.timedOut,
    ...failureFacts(r, timeoutMs),
    outcome: c.outcome,
    timing: r.timing,
  };
}
