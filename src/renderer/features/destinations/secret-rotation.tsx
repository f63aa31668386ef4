import type { SecretVersion, Source } from '../../../shared/types';
import { ConfirmButton } from '../../components/confirm-button';
import { formatDateTime, formatDuration } from '../../components/format';
import { useApp, useAppStore } from '../../store-context';

// The source's saved secrets, each with its version and a Rotate control (README, Decisions: "Secrets
// kept once, versioned"). A rotation makes a random new version: new deliveries sign with it, those
// made before keep theirs, and for the rotation window (Settings) Standard Webhooks requests carry the
// old version's signature too, so a receiver can switch without refusing anything.

const SECRETS = [
  { which: 'sharedSecret', label: 'Shared secret (X-Signature)', testId: 'rotate-shared-secret', overlap: false },
  { which: 'standardWebhooksSecret', label: 'Standard Webhooks secret', testId: 'rotate-sw-secret', overlap: true },
] as const;

export function SecretRotation({ source }: { source: Source }) {
  const store = useAppStore();
  const windowMs = useApp((s) => s.settings?.secretRotationWindowMs ?? null);
  const saved = SECRETS.filter((x) => source.webhooks[x.which]);
  if (saved.length === 0) return null;
  return (
    <div className="secret-rotation" data-testid="secret-rotation">
      {saved.map((x) => {
        const v = source.secretVersions?.[x.which] ?? null;
        const window = windowMs === null ? 'the rotation window' : formatDuration(windowMs);
        const confirm = x.overlap
          ? `New secret (the old one signs too for ${window})`
          : 'New secret (requests already made keep their signature)';
        return (
          <div className="row small-text" key={x.which}>
            <span className="grow">
              {x.label}: <span data-testid={`${x.testId}-version`}>{v ? `version ${v.version}` : 'saved'}</span>
              {v ? <span className="muted">, since {formatDateTime(v.createdAt)}</span> : null}
              {v && x.overlap ? <OverlapNote v={v} windowMs={windowMs} /> : null}
            </span>
            <ConfirmButton label="Rotate" confirm={confirm} testId={x.testId} onConfirm={() => void store.getState().rotateSecret(source.id, x.which)} />
          </div>
        );
      })}
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
