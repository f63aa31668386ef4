import type { Attempt } from '../../../shared/types';
import { formatMs } from '../../components/format';

const fmt = (ms: number) => (ms < 10 ? `${ms.toFixed(1)} ms` : formatMs(Math.round(ms)));

/**
 * Where an attempt's time went: connect, TLS, waiting for the first byte, reading the rest, as a bar
 * and in words. A reused keep-alive connection has no connect or TLS part; an attempt that never had
 * a connection (or was made before timing was recorded) shows its total only; a TLS handshake that
 * failed, how long it ran.
 */
export function AttemptTimingView({ attempt: a }: { attempt: Attempt }) {
  const t = a.timing;
  if (!t) {
    return (
      <div className="attempt-timing muted small-text" data-testid="attempt-timing" data-measured="false">
        total {formatMs(a.durationMs)}
        {a.responseStatus === null ? ' · no connection made' : ''}
      </div>
    );
  }
  const connect = t.connectMs ?? 0;
  const tls = t.tlsMs ?? 0;
  const firstByte = t.ttfbMs ?? t.totalMs;
  const parts = [
    { key: 'connect', ms: connect },
    { key: 'tls', ms: tls },
    { key: 'wait', ms: Math.max(0, firstByte - connect - tls) },
    { key: 'read', ms: Math.max(0, t.totalMs - firstByte) },
  ];
  const total = Math.max(t.totalMs, 0.1);
  return (
    <div className="attempt-timing" data-testid="attempt-timing" data-measured="true" data-reused={t.reused}>
      <div className="timing-bar" aria-hidden="true">
        {parts.map((p) => (p.ms > 0 ? <span key={p.key} className={`timing-${p.key}`} style={{ width: `${(p.ms / total) * 100}%` }} /> : null))}
      </div>
      <div className="timing-words small-text">
        {t.reused ? (
          <span data-testid="timing-reused">connection reused</span>
        ) : (
          <>
            <span>
              <i className="timing-key timing-connect" />
              connect {t.connectMs === null ? '—' : fmt(t.connectMs)}
            </span>
            {t.tlsMs !== null ? (
              <span>
                <i className="timing-key timing-tls" />
                {a.tlsError ? `TLS failed after ${fmt(t.tlsMs)}` : `TLS ${fmt(t.tlsMs)}`}
              </span>
            ) : null}
          </>
        )}
        <span>
          <i className="timing-key timing-wait" />
          first byte {t.ttfbMs === null ? '—' : fmt(t.ttfbMs)}
        </span>
        <span>
          <i className="timing-key timing-read" />
          total {fmt(t.totalMs)}
        </span>
      </div>
    </div>
  );
}
