import type { OpParsed } from '../../shared/api.contract';
import type { VerifySignatureResult } from '../../shared/signature-verify.contract';
import { SECRET_PREFIX, secretKey, secretProblem, signedContent, STANDARD_WEBHOOKS_HEADERS, toBase64 } from '../../shared/standard-webhooks';
import { checkSignature, checkStandardWebhooks } from './simulation/mock-receivers/signature-check';
import { hmacSha256Node } from './dispatcher/standard-webhooks-sign';
import type { Store } from './store/store';
import { conflict, invalidInput, notFound } from './errors';
import { sentBody } from '../../shared/attempt-body';
import { headerValue as headerOf } from '../../shared/header-value';

// verifySignature (shared/signature-verify.contract.ts): the verdicts come from the mock receivers'
// own checkers (signature-check.ts), which use the dispatcher's HMACs, so this says what a receiver
// of the lab says; on top, each secret tried is named when it made a signature received.

interface Candidate {
  secret: string;
  version: number | null;
  current: boolean;
  given: boolean;
}

type Matched = { version: number | null; current: boolean; given: boolean } | null;

const matchedOf = (c: Candidate | undefined): Matched => (c ? { version: c.version, current: c.current, given: c.given } : null);

/** The given secret first (named by its version when the source keeps it), then the source's kept versions, newest first. */
function candidates(given: string | undefined, kept: { version: number; secret: string; current: boolean }[]): Candidate[] {
  const out: Candidate[] = [];
  if (given !== undefined) {
    const same = kept.find((k) => k.secret === given);
    out.push({ secret: given, version: same?.version ?? null, current: same?.current ?? false, given: true });
  }
  for (const k of kept) if (k.secret !== given) out.push({ ...k, given: false });
  return out;
}

type Given = OpParsed<'verifySignature'>;
/** What verifying needs, whether given or read from an attempt the lab made. */
type Resolved = Omit<Given, 'body' | 'callId' | 'attemptId'> & { body: string; madeWith: VerifySignatureResult['madeWith'] };

/** An attempt the lab made, as what verifying needs: its exact bytes, its signature headers and its source; what was given besides wins. */
function fromAttempt(store: Store, input: Given): Resolved {
  if (input.attemptId === undefined || input.callId === undefined) return { ...input, body: input.body!, madeWith: null };
  if (input.attemptId < 1) throw conflict(`attemptId: attempt ${input.attemptId} belongs to a round still out: once the round is recorded its attempt has its own id (read the call again)`);
  const call = store.calls.get(input.callId);
  if (!call) throw notFound(`message ${input.callId}`);
  const delivery = store.deliveries.forCall(input.callId).find((d) => d.attempts.some((a) => a.id === input.attemptId));
  const attempt = delivery?.attempts.find((a) => a.id === input.attemptId);
  if (!delivery || !attempt) throw notFound(`attempt ${input.attemptId} of message ${input.callId}`);
  const h = attempt.requestHeaders;
  const secrets = store.sources.secrets;
  const signedSw = headerOf(h, STANDARD_WEBHOOKS_HEADERS.signature);
  const signedX = attempt.signature ?? headerOf(h, 'x-signature');
  // Which version signed it (round.ts): a manual attempt or a replay is signed with the source's
  // secrets current when it went out. A scheduled one: X-Signature when its delivery was made (a
  // Classic one right after its call arrived; an Actions batch when it was sent), webhook-signature
  // with the version its delivery names.
  // A receiver check's request is sent as it was made, like a scheduled one (dispatcher/round.ts).
  const scheduled = attempt.trigger === 'scheduled' || attempt.trigger === 'probe';
  const madeAt = !scheduled ? Date.parse(attempt.startedAt) : delivery.kind === 'actions' ? Date.parse(delivery.firstAttemptAt ?? attempt.startedAt) : Date.parse(call.receivedAt);
  const sw = scheduled ? (delivery.swVersion ?? null) : null;
  const madeWith = call.sourceId
    ? {
        sharedSecret: signedX === undefined || signedX === null ? null : secrets.versionAt(call.sourceId, 'shared', madeAt),
        standardWebhooksSecret:
          signedSw === undefined ? null : sw !== null ? { version: sw, kept: secrets.keeps(call.sourceId, 'standard', sw) } : secrets.versionAt(call.sourceId, 'standard', madeAt),
      }
    : null;
  const given = input.xSignature !== undefined || input.webhookSignature !== undefined;
  return {
    ...input,
    madeWith,
    body: input.body ?? sentBody(delivery, attempt),
    xSignature: given ? input.xSignature : (signedX ?? undefined),
    webhookSignature: given ? input.webhookSignature : signedSw,
    webhookId: input.webhookId ?? headerOf(h, STANDARD_WEBHOOKS_HEADERS.id),
    webhookTimestamp: input.webhookTimestamp ?? headerOf(h, STANDARD_WEBHOOKS_HEADERS.timestamp),
    // Its source's kept secrets are tried unless a secret to check with was given.
    source: input.source ?? (input.secret === undefined && input.standardWebhooksSecret === undefined ? (call.sourceId ?? undefined) : undefined),
  };
}

export function verifySignature(store: Store, given: Given, nowMs: number): VerifySignatureResult {
  const input = fromAttempt(store, given);
  if (input.xSignature === undefined && input.webhookSignature === undefined) {
    throw invalidInput(`attemptId: attempt ${given.attemptId} sent no signature (its source had no shared secret and no Standard Webhooks secret)`);
  }
  let sourceId: string | undefined;
  if (input.source !== undefined) {
    const source = store.sources.get(input.source) ?? store.sources.byName(input.source);
    if (!source) throw notFound(`source ${input.source}`);
    sourceId = source.id;
  }
  const keptShared = sourceId ? store.sources.secrets.kept(sourceId, 'shared') : [];
  const keptStandard = sourceId ? store.sources.secrets.kept(sourceId, 'standard') : [];
  const bytes = Buffer.from(input.body, 'utf8');

  let classic: VerifySignatureResult['classic'] = null;
  if (input.xSignature !== undefined) {
    const tried = candidates(input.secret, keptShared);
    const checks = tried.map((c) => ({ c, check: checkSignature(c.secret, bytes, input.xSignature) }));
    const hit = checks.find((x) => x.check.state === 'valid');
    const shown = hit ?? checks[0];
    // The HMAC a source's own secret gives a body is never answered: it would sign any body the
    // caller chose without the secret (over /mcp, where secrets are masked, too).
    const digest = shown?.check.expected ?? null;
    const own = shown?.c.given === true;
    classic = {
      state: shown?.check.state ?? 'not_checked',
      received: input.xSignature,
      expected: own ? digest : null,
      reason: shown ? (own || digest === null ? shown.check.reason : (shown.check.reason?.split(digest).join("(not shown: made with the source's secret)") ?? null)) : 'no shared secret to check with: give secret, or a source that has one',
      matched: matchedOf(hit?.c),
      signed: `the body's ${bytes.length} bytes exactly as given (HMAC-SHA1, lowercase hex)`,
    };
  }

  let standardWebhooks: VerifySignatureResult['standardWebhooks'] = null;
  if (input.webhookSignature !== undefined) {
    const tried = candidates(input.standardWebhooksSecret, keptStandard).filter((c) => secretProblem(c.secret) === null || c.given);
    const headers = {
      [STANDARD_WEBHOOKS_HEADERS.id]: input.webhookId,
      [STANDARD_WEBHOOKS_HEADERS.timestamp]: input.webhookTimestamp,
      [STANDARD_WEBHOOKS_HEADERS.signature]: input.webhookSignature,
    };
    const ts = input.webhookTimestamp?.trim() ?? '';
    const usable = input.webhookId !== undefined && /^\d+$/.test(ts);
    // Each v1 signature against each secret's HMAC over `id.timestamp.body` (the timestamp as
    // received, so an old request's signature can still be traced to its secret).
    const macs = usable
      ? tried.filter((c) => secretProblem(c.secret) === null).map((c) => ({ c, mac: toBase64(hmacSha256Node(secretKey(c.secret), new TextEncoder().encode(signedContent(input.webhookId!, Number(ts), input.body)))) }))
      : [];
    const signatures = input.webhookSignature
      .split(' ')
      .filter((s) => s !== '')
      .map((signature) => {
        const value = signature.startsWith('v1,') ? signature.slice(3) : null;
        return { signature, matched: matchedOf(value === null ? undefined : macs.find((m) => m.mac === value)?.c) };
      });
    // The secret given first (is the receiver's secret one that signed?), else any version that did.
    const hit = signatures.find((s) => s.matched?.given)?.matched ?? signatures.find((s) => s.matched !== null)?.matched ?? null;
    const judgeWith = (hit ? tried.find((c) => c.version === hit.version && c.given === hit.given) : tried[0])?.secret;
    const check = judgeWith === undefined ? null : checkStandardWebhooks(judgeWith, headers, bytes, Math.floor(nowMs / 1000));
    standardWebhooks = {
      state: check?.state ?? 'not_checked',
      reason: check ? check.reason : `no ${SECRET_PREFIX} secret to check with: give standardWebhooksSecret, or a source that has one`,
      signatures,
      matched: hit,
      signed: usable ? `"${input.webhookId}.${ts}." followed by the body's ${bytes.length} bytes (HMAC-SHA256, base64)` : 'nothing: webhook-id and a webhook-timestamp in Unix seconds are needed',
    };
  }
  return {
    classic,
    standardWebhooks,
    versionsTried: { sharedSecret: keptShared.map((k) => k.version), standardWebhooksSecret: keptStandard.map((k) => k.version) },
    madeWith: input.madeWith,
  };
}
