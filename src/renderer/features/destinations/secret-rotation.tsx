import { useId, useState } from 'react';
import { newSecret } from '../../../shared/new-secret';
import type { SecretVersion, Source } from '../../../shared/types';
import { CopyButton } from '../../components/copy-button';
import { formatDateTime, formatDuration } from '../../components/format';
import { useApp, useAppStore } from '../../store-context';

// The source's saved secrets, each with its version and a Rotate control (README, Decisions: "Secrets
// kept once, versioned" and "Rotating X-Signature: the receiver accepts both first"). Rotate opens a
// panel that says what the rotation does to a live receiver, proposes the new secret with Copy (kept
// until done or canceled, so it can go to the receiver first), and rotates to it on confirm.

const SECRETS = [
  { which: 'sharedSecret', label: 'Shared secret (X-Signature)', testId: 'rotate-shared-secret' },
  { which: 'standardWebhooksSecret', label: 'Standard Webhooks secret', testId: 'rotate-sw-secret' },
] as const;
type Which = (typeof SECRETS)[number]['which'];

export function SecretRotation({ source }: { source: Source }) {
  const windowMs = useApp((s) => s.settings?.secretRotationWindowMs ?? null);
  const saved = SECRETS.filter((x) => source.webhooks[x.which]);
  if (saved.length === 0) return null;
  return (
    <div className="secret-rotation" data-testid="secret-rotation">
      {saved.map((x) => {
        const v = source.secretVersions?.[x.which] ?? null;
        return (
          <div key={x.which}>
            <div className="row small-text">
              <span className="grow">
                {x.label}: <span data-testid={`${x.testId}-version`}>{v ? `version ${v.version}` : 'saved'}</span>
                {v ? <span className="muted">, since {formatDateTime(v.createdAt)}</span> : null}
                {v && x.which === 'standardWebhooksSecret' ? <OverlapNote v={v} windowMs={windowMs} /> : null}
              </span>
              <RotateButton sourceId={source.id} which={x.which} testId={x.testId} />
            </div>
            <RotatePanel sourceId={source.id} which={x.which} testId={x.testId} windowMs={windowMs} />
          </div>
        );
      })}
    </div>
  );
}

const draftKey = (sourceId: string, which: Which) => `${sourceId}:${which}`;

function RotateButton({ sourceId, which, testId }: { sourceId: string; which: Which; testId: string }) {
  const store = useAppStore();
  const open = useApp((s) => s.secretDrafts[draftKey(sourceId, which)] !== undefined);
  return (
    <button
      type="button"
      className="small"
      data-testid={testId}
      aria-expanded={open}
      // Open, it keeps the proposal (it may be at the receiver already): Cancel discards it.
      onClick={() => {
        if (!open) store.getState().setSecretDraft(draftKey(sourceId, which), newSecret(which));
      }}
    >
      Rotate…
    </button>
  );
}

/** What a rotation of this secret does to a receiver that holds the current one, in the screen's words. */
export function rotationEffect(which: Which, windowMs: number | null): { what: string; first: string } {
  if (which === 'sharedSecret') {
    return {
      what:
        'X-Signature carries one signature, so there is no overlap: from the moment you rotate, new requests are signed with the new secret only, ' +
        'and a receiver that checks only the current one refuses them (a 401, say) until it has the new one. Requests already made keep their signature, retries included.',
      first: 'First make your receiver accept a signature made with either secret (copy the new one below) and deploy it; then rotate. If the secret leaked, rotate now: new requests stop using the old one at once.',
    };
  }
  if (windowMs === 0) {
    return {
      what: 'The rotation window is 0 (Settings), so there is no overlap: new requests carry only the new secret’s signature, and a receiver that checks only the current one refuses them.',
      first: 'First give your receiver the new secret (copy it below), or set a rotation window in Settings.',
    };
  }
  const window = windowMs === null ? 'the rotation window (Settings)' : formatDuration(windowMs);
  return {
    what:
      `For ${window} after the rotation, webhook-signature carries two signatures, the new secret’s and the current one’s: a receiver holding either accepts the request. ` +
      'After that, only the new secret signs. Requests already made keep their version, retries included.',
    first: `Give your receiver the new secret (copy it below) within ${window}. If the secret leaked, rotate without overlap: new requests carry only the new signature (retries of requests made before keep their version, as every retry does).`,
  };
}

function RotatePanel({ sourceId, which, testId, windowMs }: { sourceId: string; which: Which; testId: string; windowMs: number | null }) {
  const store = useAppStore();
  const key = draftKey(sourceId, which);
  const draft = useApp((s) => s.secretDrafts[key]);
  const inputId = useId();
  // One rotation at a time: a second click while the first is out would be refused (409).
  const [busy, setBusy] = useState(false);
  if (draft === undefined) return null;
  const effect = rotationEffect(which, windowMs);
  const empty = draft.trim() === '';
  // Standard Webhooks with a window: the old version signs too meanwhile, unless a leak says stop now.
  const overlapping = which === 'standardWebhooksSecret' && windowMs !== 0;
  const rotate = async (overlap: boolean) => {
    setBusy(true);
    try {
      if (await store.getState().rotateSecret(sourceId, which, draft.trim(), overlap)) store.getState().setSecretDraft(key, null);
    } finally {
      setBusy(false);
    }
  };
  return (
    <div className="rotate-panel small-text" data-testid={`${testId}-panel`}>
      <p data-testid={`${testId}-effect`}>{effect.what}</p>
      <p data-testid={`${testId}-first`}>{effect.first}</p>
      <label htmlFor={inputId} className="muted">
        New secret (yours instead, if the receiver already has one)
      </label>
      <div className="row">
        <input
          id={inputId}
          className="mono grow"
          type="text"
          spellCheck={false}
          autoComplete="off"
          data-testid={`${testId}-value`}
          value={draft}
          onChange={(e) => store.getState().setSecretDraft(key, e.target.value)}
        />
        <CopyButton text={draft} testId={`${testId}-copy`} />
      </div>
      <div className="row">
        <button
          type="button"
          className="small danger"
          data-testid={`${testId}-confirm`}
          disabled={empty || busy}
          onClick={() => void rotate(true)}
        >
          {which === 'sharedSecret' ? 'Rotate now: new requests sign with it' : overlapping && windowMs !== null ? `Rotate (both sign for ${formatDuration(windowMs)})` : 'Rotate'}
        </button>
        {overlapping ? (
          <button type="button" className="small danger" data-testid={`${testId}-now`} disabled={empty || busy} onClick={() => void rotate(false)}>
            Rotate without overlap (leaked)
          </button>
        ) : null}
        <button type="button" className="small" data-testid={`${testId}-cancel`} onClick={() => store.getState().setSecretDraft(key, null)}>
          Cancel
        </button>
      </div>
    </div>
  );
}

/** While a rotation's window is open: until when the previous version's signature goes out too. */
function OverlapNote({ v, windowMs }: { v: SecretVersion; windowMs: number | null }) {
  if (!v.rotated || windowMs === null) return null;
  const until = Date.parse(v.createdAt) + windowMs;
  if (until <= Date.now()) return null;
  return (
    <span className="muted" data-testid="rotate-sw-secret-overlap">
      ; the previous version also signs until {formatDateTime(new Date(until).toISOString())}
    </span>
  );
}
