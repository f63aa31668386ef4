import { useState } from 'react';
import type { Delivery } from '../../shared/types';
import { formatDuration } from './format';
import { NextRetry } from './status-chip';
import { useApp, useAppStore } from '../store-context';
import { tabHref } from '../screens';

// Time-warp (SPEC §4): retry delays are divided by the factor, applied live to scheduled retries.

/** The factors offered as buttons; any other is typed. */
const TIME_SCALE_PRESETS = [1, 10, 100, 1000] as const;

export function TimeWarpControl({ compact = false, testId = 'time-warp' }: { compact?: boolean; testId?: string }) {
  const store = useAppStore();
  const scale = useApp((s) => s.settings?.timeScale ?? null);
  const error = useApp((s) => s.timeScaleError);
  const [custom, setCustom] = useState('');
  const [busy, setBusy] = useState(false);
  const apply = async (n: number) => {
    setBusy(true);
    if (await store.getState().setTimeScale(n)) setCustom('');
    setBusy(false);
  };
  const isPreset = scale !== null && (TIME_SCALE_PRESETS as readonly number[]).includes(scale);
  return (
    <div className={`time-warp${compact ? ' compact' : ''}`} data-testid={testId} data-scale={scale ?? ''}>
      <div className="row wrap">
        <span className="field-label" title="Divides retry delays only; request timeouts (5 s, 10 s for Actions) stay real">
          Time-warp
        </span>
        <span className="segmented" role="group" aria-label="Time-warp factor">
          {TIME_SCALE_PRESETS.map((n) => (
            <button
              key={n}
              type="button"
              className={scale === n ? 'active' : ''}
              aria-pressed={scale === n}
              disabled={busy}
              data-testid={`${testId}-${n}`}
              onClick={() => void apply(n)}
            >
              ×{n}
            </button>
          ))}
        </span>
        <form
          className="inline"
          onSubmit={(e) => {
            e.preventDefault();
            const n = Number(custom);
            if (custom.trim() && Number.isFinite(n)) void apply(n);
            else store.setState({ timeScaleError: 'a number, e.g. 60 (0.001 to 1000000)' });
          }}
        >
          <input
            type="number"
            step="any"
            min={0.001}
            className="time-warp-custom"
            aria-label="Custom time-warp factor"
            placeholder={scale !== null && !isPreset ? `×${scale}` : '×n'}
            value={custom}
            data-testid={`${testId}-custom`}
            onChange={(e) => setCustom(e.target.value)}
          />
          <button type="submit" className="small" disabled={busy} data-testid={`${testId}-apply`}>
            Set
          </button>
        </form>
        {!compact && scale !== null ? (
          <span className="muted small-text" data-testid={`${testId}-current`}>
            now ×{scale}
            {scale === 1 ? ' (real time)' : `: 30 min of retry delay takes ${formatDuration((30 * 60_000) / scale)}`}
          </span>
        ) : null}
      </div>
      {error ? (
        <div className="field-error" role="alert" data-testid={`${testId}-error`}>
          {error}
        </div>
      ) : null}
    </div>
  );
}

/** "+30m 00s simulated" for an offset since the first attempt. */
export function formatSimOffset(ms: number): string {
  return `+${formatDuration(ms)} simulated`;
}

/** The next retry in simulated time (offset since the first attempt) and in real time with a countdown. */
export function RetryTimes({ delivery }: { delivery: Pick<Delivery, 'nextAttemptAt' | 'nextAttemptSimOffsetMs' | 'attemptCount'> }) {
  const scale = useApp((s) => s.settings?.timeScale ?? 1);
  if (!delivery.nextAttemptAt) return null;
  return (
    <span className="retry-times" data-testid="retry-times">
      {delivery.nextAttemptSimOffsetMs !== null ? (
        <span data-testid="next-retry-sim" title="Scheduled offset since the first attempt, in the schedule's own (simulated) time">
          {formatSimOffset(delivery.nextAttemptSimOffsetMs)}
          {scale !== 1 ? ` (×${scale})` : ''} ·{' '}
        </span>
      ) : null}
      <NextRetry at={delivery.nextAttemptAt} />
    </span>
  );
}

/**
 * In the sidebar while time-warp is on (factor not ×1): retries then run faster than the clock on
 * every screen, which nothing else there would say. Links to the control on Mock receivers.
 */
export function TimeWarpIndicator() {
  const scale = useApp((s) => s.settings?.timeScale ?? 1);
  if (scale === 1) return null;
  return (
    <a href={tabHref('receivers')} className="time-warp-indicator" data-testid="time-warp-indicator" data-scale={scale} title={`Time-warp is on: retry delays run ${scale} times faster. Set it back to ×1 on Mock receivers.`}>
      Time-warp ×{scale}
    </a>
  );
}
