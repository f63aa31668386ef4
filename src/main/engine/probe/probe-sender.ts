import { randomBytes } from 'node:crypto';
import type { ActionsMapping, JsonObject, NormalizedCall, Settings, Source } from '../../../shared/types';
import type { ProbeEvidence } from '../../../shared/probe.contract';
import { CLASSIC_TIMEOUT_MS } from '../../../shared/actions/retry-classes';
import type { Ingest } from '../collector/ingest';
import type { EventHub } from '../event-hub';
import type { Store } from '../store/store';
import type { ActiveDelivery } from '../store/delivery.types';
import { attemptOf } from '../store/attempt-rows';
import { newActive, progressOf } from '../store/delivery-rows';
import type { WriteTx } from '../store/write-queue';
import type { HttpSender, SendResult } from '../dispatcher/http-sender';
import { actionsDelivery, planDelivery } from '../dispatcher/delivery-plan';
import { buildActionsRequest } from '../actions/request';
import { currentRequest, standardWebhooksFor } from '../dispatcher/request-headers';
import type { RoundResult } from '../dispatcher/round';
import type { AskedRun } from '../dispatcher/run-queue';
import { transition, type DeliveryEvent } from '../store/delivery-transition';
import type { Classification } from '../dispatcher/classify';
import { signBody } from '../dispatcher/sign';
import { describeTreatment, type ProbeExpectation } from './treatment';

// One probe request, sent and recorded the way the dispatcher sends and records a delivery: the
// body built by the Webhooks destination's builder (planDelivery), the headers by its header rule,
// signed by its signer, sent through the dispatcher's run queue (run-queue.ts) — then stored as a
// call of the "probe" source with its delivery and the one attempt, so the inspector shows it like
// any other. The probe only changes what a check needs changed (a tampered body under the original
// signature, a wrong or missing one, Standard Webhooks headers over other bytes or with a stale
// timestamp).

/** The route a probe call shows in the inspector. */
export const PROBE_PATH = '/internal/probe';
const PROBE_USER_AGENT = 'Webhook Lab (probe)';

/**
 * How long the probe waits for an answer: longer than Segment's 5 s, so a slow receiver's answer is
 * still seen and judged by the checks; the latency check judges the time against 5 s.
 */
export const PROBE_WAIT_MS = 10_000;

export interface ProbeTarget {
  url: string;
  secret?: string;
  standardWebhooksSecret?: string;
}

export interface ProbeRequest {
  label: string;
  expected: ProbeExpectation;
  call: NormalizedCall;
  /** Changes the built body before it is signed (a future version, unknown fields). */
  editBody?: (body: JsonObject) => JsonObject;
  /**
   * The built body's text as another sender writes the same JSON (escapes, number forms), signed as
   * sent: bytes a receiver must verify as they came, since parsing and serializing again changes them.
   */
  rewriteBody?: (text: string) => string;
  /** Sent in place of the signed body, under the original signature (X-Signature and Standard Webhooks). */
  tamperedBody?: (body: JsonObject) => JsonObject;
  /** X-Signature: the one the lab computes (default), one made with another key, or none. */
  signature?: 'valid' | 'wrong' | 'none';
  /**
   * Standard Webhooks headers (with a whsec_ secret): signed now (default), signed over other
   * bytes, signed with a timestamp this many seconds old, under a given webhook-id, or with two
   * signatures as during a rotation window (another key's first, then the given secret's).
   */
  standardWebhooks?: { kind: 'valid'; id?: string } | { kind: 'other-bytes' } | { kind: 'stale'; ageS: number } | { kind: 'rotation' } | { kind: 'none' };
}

export interface ProbeAnswer {
  evidence: ProbeEvidence;
  result: SendResult;
  classification: Classification;
  /** The webhook-id sent, when Standard Webhooks headers went. */
  webhookId: string | null;
}

export interface ProbeSenderDeps {
  store: Store;
  ingest: Ingest;
  events: EventHub;
  now: () => number;
  /**
   * The dispatcher's run queue: each probe request enters it like every round and waits for a slot in
   * the receiver's lane, so a check of a receiver a busy source sends to adds nothing to what it holds.
   */
  run: (req: AskedRun) => Promise<RoundResult>;
}

export class ProbeSender {
  constructor(
    private readonly deps: ProbeSenderDeps,
    private readonly source: Source,
    private readonly target: ProbeTarget,
    private readonly settings: Settings,
    private sender: HttpSender,
  ) {}

  /** The probe signs with the secret it was given, which the lab does not keep (its deliveries name no version). */
  private swSecrets(): string[] {
    return this.target.standardWebhooksSecret ? [this.target.standardWebhooksSecret] : [];
  }

  /** After an untrusted certificate was reported: the other checks go on without checking it. */
  useSender(sender: HttpSender): void {
    this.sender = sender;
  }

  async send(req: ProbeRequest): Promise<ProbeAnswer> {
    const { ingest, store, now } = this.deps;
    const { url, secret, standardWebhooksSecret } = this.target;
    // Stored first, with no delivery planned: the probe sends it itself, once (no retry schedule).
    const stored = await ingest.inject([{ source: this.source, call: req.call, path: PROBE_PATH, userAgent: PROBE_USER_AGENT }], () => null);
    const callId = stored.calls[0]?.id ?? null;

    let plan = planDelivery(req.call, { urls: [{ url, headers: {} }], sharedSecret: secret || undefined, standardWebhooksSecret: standardWebhooksSecret || undefined }, this.settings)!;
    if (req.editBody) {
      const body = Buffer.from(JSON.stringify(req.editBody(JSON.parse(plan.body.toString('utf8')) as JsonObject)));
      plan = { ...plan, body, signature: currentRequest(this.settings.userAgentProduct, secret || undefined, body).signature };
    }
    if (req.rewriteBody) {
      const body = Buffer.from(req.rewriteBody(plan.body.toString('utf8')));
      plan = { ...plan, body, signature: currentRequest(this.settings.userAgentProduct, secret || undefined, body).signature };
    }
    const tampered = req.tamperedBody ? Buffer.from(JSON.stringify(req.tamperedBody(JSON.parse(plan.body.toString('utf8')) as JsonObject))) : undefined;
    const signature = req.signature === 'none' ? null : req.signature === 'wrong' ? signBody(`${secret ?? ''}-not-the-secret`, plan.body) : plan.signature;

    // Standard Webhooks: the round signs the bytes it sends, now; the variants are made here with the
    // same signer and go as the URL's headers (the round leaves them alone when it signs nothing).
    let sw: ActiveDelivery['standardWebhooks'] = plan.standardWebhooks;
    let headers: Record<string, string> = {};
    const v = req.standardWebhooks;
    if (sw && v && v.kind === 'valid' && v.id) sw = { ...sw, id: v.id };
    if (sw && v && v.kind === 'none') sw = null;
    if (sw && v && v.kind !== 'valid') {
      const other = Buffer.from(JSON.stringify({ ...JSON.parse(plan.body.toString('utf8')), probe: 'other bytes' }));
      const secrets = v.kind === 'rotation' ? [`whsec_${randomBytes(32).toString('base64')}`, ...this.swSecrets()] : this.swSecrets();
      headers = standardWebhooksFor({ id: sw.id, secrets }, v.kind === 'other-bytes' ? other : plan.body, now() - (v.kind === 'stale' ? v.ageS * 1000 : 0)) ?? {};
      sw = null;
    }
    // Sent as this request means it (its headers, signature, Standard Webhooks), stored as the lab planned it.
    const d: ActiveDelivery = { ...newActive(0, callId ?? 0, this.source.id, req.call.type, { ...plan, urls: [{ url, headers }], signature, standardWebhooks: sw }), timeoutMs: PROBE_WAIT_MS };
    const insert = (tx: WriteTx) => store.ledger.create(tx, callId!, this.source.id, d.type, { ...plan, urls: [{ url, headers: {} }] });
    return this.sendAndRecord(d, req, callId === null ? null : insert, tampered);
  }

  /**
   * One request of an Actions mapping (the actions check): `calls` (one, or a batch) through the
   * mapping as Segment's destination sends them (buildActionsRequest: the mapping kit's data, the
   * mapping's method and headers, X-Signature over the first item's data), to the probe's URL.
   */
  async sendActions(req: { label: string; expected: '2xx'; calls: NormalizedCall[]; mapping: ActionsMapping }): Promise<ProbeAnswer> {
    const { ingest, store } = this.deps;
    const { url, secret, standardWebhooksSecret } = this.target;
    const stored = await ingest.inject(req.calls.map((call) => ({ source: this.source, call, path: PROBE_PATH, userAgent: PROBE_USER_AGENT })), () => null);
    const callIds = stored.calls.map((c) => c.id);
    const mapping = { ...req.mapping, url };
    const r = buildActionsRequest(mapping, req.calls);
    const plan = actionsDelivery(mapping, r, r.body, r.signedText, { sharedSecret: secret || undefined, standardWebhooksSecret: standardWebhooksSecret || undefined }, callIds);
    const d = newActive(0, callIds[0] ?? 0, this.source.id, req.calls[0].type, plan);
    const insert = (tx: WriteTx) => store.ledger.createActions(tx, this.source.id, d.type, plan);
    return this.sendAndRecord(d, req, callIds.length === req.calls.length ? insert : null);
  }

  /** Sends `d` as the dispatcher's round does, records it (when its calls were stored) and judges the answer. */
  private async sendAndRecord(d: ActiveDelivery, req: Pick<ProbeRequest, 'label' | 'expected'>, insert: ((tx: WriteTx) => ActiveDelivery) | null, tampered?: Buffer): Promise<ProbeAnswer> {
    let answered: { r: SendResult; c: Classification } | null = null;
    // Sent as created (the probe froze the request it means), timed from when its lane gave it a slot.
    const round = await this.deps.run({
      delivery: d, urls: [0], trigger: 'probe', body: tampered, onAnswer: (_i, r, c) => (answered = { r, c }),
      via: { sender: this.sender, source: this.source, settings: this.settings, secrets: () => this.swSecrets() },
    });
    const attempt = round.attempts[0];
    const { r: result, c: classification } = answered ?? { r: notAnswered(attempt.startedAt), c: round.classifications[0] };
    const callId = insert === null ? null : d.callId;
    if (insert !== null) await this.record(d.callId, round, d.method, insert);
    return {
      evidence: {
        label: req.label,
        expected: req.expected,
        ok: okFor(req.expected, result),
        method: d.method,
        url: this.target.url,
        status: attempt.responseStatus,
        durationMs: attempt.durationMs,
        ...(round.waitedMs?.[0] ? { waitedMs: round.waitedMs[0] } : {}),
        error: attempt.errorCode === null ? null : (attempt.errorMessage ?? attempt.errorCode),
        callId,
        treatment: describeTreatment(result, classification, req.expected),
      },
      result,
      classification,
      webhookId: attempt.requestHeaders['webhook-id'] ?? null,
    };
  }

  /** The delivery (as planned: the URL, the lab's body and signature) and the attempt as sent, in one write. */
  private async record(callId: number, round: RoundResult, method: ActiveDelivery['method'], insert: (tx: WriteTx) => ActiveDelivery): Promise<void> {
    const { store, events, now } = this.deps;
    const a = round.attempts[0];
    // One attempt, never retried: the schedule is never asked.
    const answered: DeliveryEvent = { kind: 'round', trigger: 'probe', answers: round, startedAt: a.startedAt, finishedAt: now(), schedule: { settings: this.settings, random: () => 0 } };
    const recorded = await store.writes.run((tx) => {
      const fresh = insert(tx);
      const id = fresh.id;
      const update = transition(fresh, answered);
      const row = { ...a, deliveryId: id };
      const [attemptId] = store.ledger.recordRound(tx, update, [row])!;
      return { attempt: attemptOf(attemptId, row, { method }), delivery: progressOf(update) };
    });
    events.emit({ type: 'attempt.recorded', callId, ...recorded });
    events.touch(callId);
  }
}

/** A 2xx when 2xx is expected; a 4xx when the request must be refused. */
function okFor(expected: ProbeRequest['expected'], r: SendResult): boolean {
  const s = r.status;
  if (s === null || r.errorCode !== null) return false;
  if (expected === 'either') return true;
  return expected === '2xx' ? s >= 200 && s < 300 : s >= 400 && s < 500;
}

/** Segment's Classic timeout, against which the probe judges answer times. */
export const SEGMENT_TIMEOUT_MS = CLASSIC_TIMEOUT_MS;

function notAnswered(startedAt: number): SendResult {
  return {
    startedAt, durationMs: 0, status: null, responseHeaders: null, responseBody: null, responseTruncated: false,
    errorCode: 'NOT_SENT', errorMessage: 'not sent', timedOut: false, tlsError: false, timing: null,
  };
}
