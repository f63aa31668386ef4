import { useState } from 'react';
import type { MockRequestRecord, SignatureState } from '../../../shared/mock-receiver.schema';
import type { Attempt, CallDetail } from '../../../shared/types';
import { sentBody } from '../../../shared/attempt-body';
import { EmptyState } from '../../components/field';
import { formatMs, formatTime, prettyJson } from '../../components/format';
import { StatusChip } from '../../components/status-chip';
import { useApp, useAppStore } from '../../store-context';
import { HeadersTable as Headers } from '../../components/headers-table';

// What a mock receiver got, next to what the dispatcher recorded for the same message.

const VERDICT: Record<SignatureState, { label: string; cls: string }> = {
  valid: { label: 'signature valid', cls: 'verify-match' },
  invalid: { label: 'signature invalid', cls: 'verify-mismatch' },
  missing: { label: 'signature missing', cls: 'verify-unsigned' },
  not_checked: { label: 'not checked (no secret)', cls: 'verify-no-secret' },
};

function responseText(r: MockRequestRecord['response']): string {
  const what = r.action === 'reset' ? 'connection reset' : r.action === 'hang' ? 'hung (no answer)' : `answered ${r.status}`;
  const ended = r.endedBy === 'client' ? ', the client gave up first' : r.endedBy === 'stop' ? ', receiver stopped' : '';
  const items = r.itemStatuses ? ` · per item: ${r.itemStatuses.join(', ')}` : '';
  return `${what}${r.failed ? ' (a failure by behavior)' : ''}${r.delayMs ? ` after ${formatMs(r.delayMs)}` : ''}${ended}${items}`;
}

/** The attempt that produced this request: same URL path and body, nearest in time. */
export function matchAttempt(detail: CallDetail, record: MockRequestRecord): { attempt: Attempt; index: number; of: number } | null {
  const path = record.path.split('?')[0];
  let best: { attempt: Attempt; index: number; of: number; gap: number } | null = null;
  for (const d of detail.deliveries) {
    for (const a of d.attempts) {
      let aPath: string;
      try {
        aPath = new URL(a.url).pathname;
      } catch {
        continue;
      }
      if (aPath !== path || sentBody(d, a) !== record.body) continue;
      const gap = Math.abs(new Date(a.startedAt).getTime() - new Date(record.at).getTime());
      if (!best || gap < best.gap) {
        const same = d.attempts.filter((x) => x.urlIndex === a.urlIndex).sort((x, y) => x.startedAt.localeCompare(y.startedAt) || x.id - y.id);
        best = { attempt: a, index: same.indexOf(a) + 1, of: same.length, gap };
      }
    }
  }
  return best ? { attempt: best.attempt, index: best.index, of: best.of } : null;
}

function DispatcherSide({ record }: { record: MockRequestRecord }) {
  const store = useAppStore();
  const match = useApp((s) => s.dispatcherMatches[record.id]);
  if (!match || match.state === 'loading') return <div className="muted">Looking up the call by its messageId…</div>;
  if (match.state === 'none') return <div className="muted" data-testid="dispatcher-none">{match.reason}</div>;
  if (match.state === 'error') return <div className="notice error">{match.error}</div>;
  const { call, deliveries } = match.detail;
  const found = matchAttempt(match.detail, record);
  const delivery = deliveries.find((d) => d.attempts.some((a) => a.id === found?.attempt.id)) ?? deliveries[0];
  const a = found?.attempt;
  return (
    <div data-testid="dispatcher-side">
      <div className="row wrap">
        <span>
          {call.type} #{call.id}
        </span>
        {delivery ? <StatusChip call={{ status: call.status, dropReason: call.dropReason, deliveryState: delivery.state, nextAttemptAt: delivery.nextAttemptAt }} /> : null}
        <a
          href="#/inspector"
          data-testid="open-call"
          onClick={() => store.getState().openCallInInspector(call.id)}
        >
          open in Inspector
        </a>
      </div>
      {a && found ? (
        <>
          <div className="small-text" data-testid="dispatcher-attempt">
            attempt {found.index} of {found.of} · {formatTime(a.startedAt)} · {a.trigger} ·{' '}
            {a.responseStatus !== null ? `got ${a.responseStatus}` : a.timedOut ? 'timed out' : (a.errorCode ?? 'no answer')} in {formatMs(a.durationMs)} → {a.outcome}
          </div>
          {a.errorMessage ? <div className="muted small-text">{a.errorMessage}</div> : null}
          <h4>Signed with</h4>
          <code className="mono">{a.signature ?? '(unsigned: the source has no shared secret)'}</code>
          <h4>Request headers sent</h4>
          <Headers headers={a.requestHeaders} />
          <h4>Response recorded</h4>
          <pre className="body">{a.responseBody ?? '(none)'}</pre>
        </>
      ) : (
        <div className="muted">The call is stored, but no attempt with this exact body and path was recorded (a replay with an edited body, or an attempt still in flight).</div>
      )}
    </div>
  );
}

/** A batch from Webhooks (Actions): its User-Agent, and a JSON array body. */
function isActionsBatch(record: MockRequestRecord): boolean {
  if (!/^Segment \(Actions\)/.test(record.headers['user-agent'] ?? '')) return false;
  return record.body.trimStart().startsWith('[');
}

function RequestCompare({ record }: { record: MockRequestRecord }) {
  const sig = record.signature;
  return (
    <div className="cols-2 request-compare" data-testid="request-compare">
      <section>
        <h3>Received by the mock receiver</h3>
        <div className={`verify-result ${VERDICT[sig.state].cls}`} data-testid="signature-verdict" data-state={sig.state}>
          {VERDICT[sig.state].label}
          {sig.reason ? `: ${sig.reason}` : ''}
        </div>
        {sig.state === 'invalid' && isActionsBatch(record) ? (
          <div className="notice small-text" data-testid="actions-batch-signature-note">
            Expected for a Webhooks (Actions) batch: Segment signs it over its first event&apos;s data only, not over this array body, so a
            receiver that verifies the raw body rejects every batch (see docs/actions.md).
          </div>
        ) : null}
        <table className="kv">
          <tbody>
            <tr>
              <th>received</th>
              <td>{sig.received ?? '—'}</td>
            </tr>
            <tr>
              <th>expected</th>
              <td>{sig.expected ?? '—'}</td>
            </tr>
          </tbody>
        </table>
        {record.standardWebhooks && record.standardWebhooks.state !== 'not_checked' ? (
          <div className={`verify-result ${VERDICT[record.standardWebhooks.state].cls}`} data-testid="sw-verdict" data-state={record.standardWebhooks.state}>
            Standard Webhooks: {VERDICT[record.standardWebhooks.state].label}
            {record.standardWebhooks.reason ? `: ${record.standardWebhooks.reason}` : ''}
            <div className="mono small-text">
              webhook-id {record.standardWebhooks.id ?? '—'} · webhook-timestamp {record.standardWebhooks.timestamp ?? '—'}
              <br />
              received {record.standardWebhooks.received ?? '—'}
              <br />
              expected {record.standardWebhooks.expected ?? '—'}
            </div>
          </div>
        ) : null}
        <div className="small-text" data-testid="mock-response-text">
          {responseText(record.response)}
        </div>
        <h4>Headers</h4>
        <Headers headers={record.headers} />
        <h4>
          Body ({record.bodyBytes} bytes{record.bodyTruncated ? ', truncated' : ''})
        </h4>
        <pre className="body">{prettyJson(record.body)}</pre>
      </section>
      <section>
        <h3>Recorded by the dispatcher</h3>
        <DispatcherSide record={record} />
      </section>
    </div>
  );
}

export function ReceiverRequests() {
  const store = useAppStore();
  const requests = useApp((s) => s.receiverRequests);
  const error = useApp((s) => s.receiverRequestsError);
  const [open, setOpen] = useState<string | null>(null);
  const s = store.getState();
  return (
    <section className="receiver-requests" data-testid="receiver-requests" data-count={requests.length}>
      <header className="row">
        <h3 className="grow">Requests received</h3>
        <span className="muted small-text">newest first, live</span>
        <button type="button" className="small" data-testid="receiver-requests-reload" onClick={() => void s.loadReceiverRequests()}>
          Reload
        </button>
      </header>
      {error ? <div className="notice error">Could not load requests: {error}</div> : null}
      {requests.length === 0 && !error ? (
        <EmptyState title="No request yet" testId="requests-empty">
          Use <b>Use for source…</b> above to add this receiver to a source's Webhooks URLs, then send a call from{' '}
          <a href="#/compose">Compose</a>. Each request appears here as it arrives, with its signature verdict.
        </EmptyState>
      ) : (
        <table className="table requests-table">
          <thead>
            <tr>
              <th>#</th>
              <th>time</th>
              <th>request</th>
              <th>answer</th>
              <th>signature</th>
            </tr>
          </thead>
          <tbody>
            {requests.map((r) => (
              <RequestRow
                key={r.id}
                record={r}
                open={open === r.id}
                onToggle={() => {
                  const next = open === r.id ? null : r.id;
                  setOpen(next);
                  if (next) void s.matchDispatcher(r);
                }}
              />
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}

function RequestRow({ record, open, onToggle }: { record: MockRequestRecord; open: boolean; onToggle(): void }) {
  const r = record.response;
  return (
    <>
      <tr className={`request-row${open ? ' selected' : ''}`} data-testid="request-row" data-signature={record.signature.state} onClick={onToggle}>
        <td className="num">{record.seq}</td>
        <td>{formatTime(record.at)}</td>
        <td className="mono ellipsis">
          {record.method} {record.path}
        </td>
        <td>
          <span className={`chip ${r.action !== 'status' || (r.status ?? 0) >= 300 ? 'chip-failed' : 'chip-delivered'}`}>
            {r.action === 'status' ? r.status : r.action}
            {r.delayMs ? ` · ${formatMs(r.delayMs)}` : ''}
          </span>
        </td>
        <td>
          <span className={`chip ${VERDICT[record.signature.state].cls}`}>{record.signature.state.replace('_', ' ')}</span>
        </td>
      </tr>
      {open ? (
        <tr>
          <td colSpan={5}>
            <RequestCompare record={record} />
          </td>
        </tr>
      ) : null}
    </>
  );
}
