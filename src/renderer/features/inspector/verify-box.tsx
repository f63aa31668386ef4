import { useState } from 'react';
import { useApp, useAppStore } from '../../store-context';
import { verifySignature, type VerifyResult } from '../../../shared/preview/signature';
import type { SecretVersion } from '../../../shared/types';
import { hasStandardWebhooks, labVerdict, laterSecretNote, verifyStandardWebhooksAttempt, type SignatureTarget, type SwResult } from './verify-model';

/** Which secret versions signed the attempt, as far as the lab knows (laterSecretNote). */
interface Signed {
  /** The Standard Webhooks version its delivery signs with. */
  swVersion: number | null;
  /** When its delivery was made (X-Signature is signed then). */
  at: string;
  /** The attempt in the lab (absent in an opened export, or a round still out): the engine can check it against the versions it keeps. */
  lab?: { callId: number; attemptId: number };
}

/**
 * A secret field with its check button; typing clears the last result, Enter checks. `fromSource`:
 * the call's source's secret as it is now, one click away (fills the field and checks).
 */
function SecretInput(p: {
  what: string;
  placeholder: string;
  value: string;
  onChange(v: string): void;
  onCheck(secret?: string): void;
  testId: string;
  buttonTestId: string;
  fromSource?: string;
}) {
  const { fromSource } = p;
  return (
    <label className="verify-field">
      <span className="muted small-text">
        Secret <span className="muted">· checks {p.what}</span>
      </span>
      <span className="row">
        <input
          type="text"
          placeholder={p.placeholder}
          value={p.value}
          data-testid={p.testId}
          spellCheck={false}
          autoComplete="off"
          onChange={(e) => p.onChange(e.target.value)}
          onKeyDown={(e) => e.key === 'Enter' && p.onCheck()}
        />
        <button type="button" className="small" data-testid={p.buttonTestId} onClick={() => p.onCheck()} aria-label={`Verify ${p.what}`}>
          Verify
        </button>
        {fromSource ? (
          <button
            type="button"
            className="small"
            data-testid={`${p.testId}-source`}
            title="Fill in the source's secret as it is now and verify (a secret changed since the request was sent will not match)"
            onClick={() => {
              p.onChange(fromSource);
              p.onCheck(fromSource);
            }}
          >
            Use the source&apos;s
          </button>
        ) : null}
      </span>
    </label>
  );
}

/** Paste a whsec_ secret, see whether the attempt's webhook-signature matches, and why not. */
function StandardWebhooksVerify(p: { headers: Record<string, string>; body: string; fromSource?: string; current?: SecretVersion | null; signed?: Signed }) {
  const { headers, body, fromSource } = p;
  const [secret, setSecret] = useState('');
  const [result, setResult] = useState<SwResult | null>(null);
  const store = useAppStore();
  const check = async (s = secret) => {
    const r = await verifyStandardWebhooksAttempt({ headers, body, secret: s, nowMs: Date.now() });
    const note = r.status === 'mismatch' && s === fromSource ? laterSecretNote({ which: 'standard', current: p.current, signedWith: p.signed?.swVersion }) : null;
    const lab = note ? p.signed?.lab : undefined;
    // Signed with an earlier version: the lab tries the versions it keeps instead of asking for a paste.
    const answer = lab ? await store.getState().verifyWithLab(lab) : null;
    if (answer && typeof answer !== 'string' && answer.standardWebhooks) {
      const matched = answer.standardWebhooks.signatures.find((x) => x.matched !== null)?.matched?.version ?? null;
      setResult(labVerdict({ which: 'standard', matchedVersion: matched, madeWith: answer.madeWith?.standardWebhooksSecret ?? null, current: p.current?.version ?? null, tried: answer.versionsTried.standardWebhooksSecret }));
      return;
    }
    setResult(note ? { ...r, explanation: `Mismatch. ${note}` } : r);
  };
  return (
    <>
      <SecretInput
        what="webhook-signature (Standard Webhooks)"
        placeholder="paste the whsec_… secret"
        value={secret}
        onChange={(v) => {
          setSecret(v);
          setResult(null);
        }}
        onCheck={(s) => void check(s)}
        testId="verify-sw-secret"
        buttonTestId="verify-sw-button"
        fromSource={fromSource}
      />
      {result ? (
        <div className={`verify-result verify-${result.status}`} data-testid="verify-sw-result" data-status={result.status}>
          {result.explanation}
        </div>
      ) : null}
    </>
  );
}

/**
 * Paste a secret, see whether the attempt's X-Signature matches what it covers (the exact bytes sent;
 * for an Actions batch, the first event's data), and why not; and the Standard Webhooks signature
 * when the attempt carried one.
 */
export function VerifyBox({
  body,
  signature,
  headers,
  target,
  bodyCut = false,
  signed,
}: {
  body: string;
  signature: string | null;
  headers: Record<string, string>;
  target: SignatureTarget;
  /** `body` is only a large batch's first items: X-Signature (first item) can be checked, webhook-signature (whole body) cannot. */
  bodyCut?: boolean;
  /** Which versions signed it, to say so when the source's secret is a later one. */
  signed?: Signed;
}) {
  const [secret, setSecret] = useState('');
  // fromLab: the engine's verdict on a kept version, which says itself what it checked.
  const [result, setResult] = useState<(VerifyResult & { fromLab?: boolean }) | null>(null);
  // The open call's source, for its secrets (a source deleted since has none to offer).
  const source = useApp((s) => s.sources.find((src) => src.id === s.detail?.call.sourceId));
  const sharedSecret = source?.webhooks.sharedSecret || undefined;
  const store = useAppStore();
  const check = async (s = secret) => {
    const r = await verifySignature({ body: target.text, signature, secret: s });
    const note = r.status === 'mismatch' && s === sharedSecret ? laterSecretNote({ which: 'shared', current: source?.secretVersions?.sharedSecret, signedBy: signed?.at }) : null;
    const lab = note && signature !== null ? signed?.lab : undefined;
    // Signed with an earlier version: the lab tries the versions it keeps instead of asking for a paste
    // (over what X-Signature covers: for an Actions batch, its first event's data).
    const answer = lab ? await store.getState().verifyWithLab({ ...lab, body: target.text, xSignature: signature! }) : null;
    if (answer && typeof answer !== 'string' && answer.classic) {
      const verdict = labVerdict({ which: 'shared', matchedVersion: answer.classic.matched?.version ?? null, madeWith: answer.madeWith?.sharedSecret ?? null, current: source?.secretVersions?.sharedSecret?.version ?? null, tried: answer.versionsTried.sharedSecret });
      setResult({ ...verdict, computed: null, fromLab: true });
      return;
    }
    setResult(note ? { ...r, explanation: `Mismatch. ${note}` } : r);
  };
  const swSecret = source?.webhooks.standardWebhooksSecret || undefined;
  return (
    <div className="verify-box" data-testid="verify-box">
      {target.note && signature ? (
        <div className="muted small-text" data-testid="verify-target-note">
          {target.note}
        </div>
      ) : null}
      <SecretInput
        what="X-Signature"
        placeholder="paste the shared secret"
        value={secret}
        onChange={(v) => {
          setSecret(v);
          setResult(null);
        }}
        onCheck={(s) => void check(s)}
        testId="verify-secret"
        buttonTestId="verify-button"
        fromSource={sharedSecret}
      />
      {result ? (
        <div className={`verify-result verify-${result.status}`} data-testid="verify-result" data-status={result.status}>
          <div>{target.note && result.status === 'match' && !result.fromLab ? "Match: HMAC-SHA1 of the first event's data with this secret equals X-Signature." : result.explanation}</div>
          {result.computed ? (
            <div className="mono small-text">
              computed {result.computed}
              <br />
              received {signature ?? '(none)'}
            </div>
          ) : null}
        </div>
      ) : null}
      {hasStandardWebhooks(headers) ? (
        bodyCut ? (
          <div className="muted small-text" data-testid="verify-sw-cut">
            webhook-signature covers the whole batch body, which is too large to check here.
          </div>
        ) : (
          <StandardWebhooksVerify headers={headers} body={body} fromSource={swSecret} current={source?.secretVersions?.standardWebhooksSecret} signed={signed} />
        )
      ) : null}
    </div>
  );
}
