import { useState } from 'react';
import { PlanCheckView } from '../../components/violations-view';
import type { Attempt, CallDetail, Delivery, UrlOutcome } from '../../../shared/types';
import { URL_STATE_LABELS } from '../../../shared/url-outcome';
import { forwardingText } from '../../../shared/forwarding';
import { MAX_CALL_DEPTH } from '../../../shared/nesting';
import { CopyButton } from '../../components/copy-button';
import { formatDateTime } from '../../components/format';
import { Elapsed, StatusChip } from '../../components/status-chip';
import { useApp, useAppStore } from '../../store-context';
import { AttemptView, attemptCurl, byteLength } from './attempt-view';
import { BodyView } from '../../components/lazy-json-view';
import { EditReplay } from './edit-replay';
import { RetryTimes } from '../../components/time-warp';
import { outcomeLine } from '../../components/status-chip-model';
import { BatchMembers, BatchMembership } from './batch-members';
import { BatchBodyPages } from './batch-body-pages';
import { deliveryTitle, deliveryUrlWarning, outcomesOf, urlCountOf } from './delivery-model';

type DeliveryWithAttempts = Delivery & { attempts: Attempt[] };

/** One URL's state in words: "failed · HTTP 500 · 1 attempt", "in flight 3s". */
function UrlStateChip({ outcome }: { outcome: UrlOutcome }) {
  const since = outcome.state === 'in_flight' && outcome.startedAt ? Date.parse(outcome.startedAt) : null;
  return (
    <span className={`chip chip-${outcome.state}`} data-testid="url-state" data-state={outcome.state} title={outcomeLine(outcome)}>
      {URL_STATE_LABELS[outcome.state]}
      {since !== null ? <Elapsed since={since} /> : null}
      {outcome.lastStatus !== null && outcome.state !== 'in_flight' ? ` · HTTP ${outcome.lastStatus}` : ''}
    </span>
  );
}

function UrlTimeline({ delivery, urlIndex, outcome, raw }: { delivery: DeliveryWithAttempts; urlIndex: number; outcome?: UrlOutcome; raw: boolean }) {
  const store = useAppStore();
  const replaying = useApp((s) => s.replaying);
  // An opened export (opened-export-view.tsx): nothing here reaches the engine.
  const readOnly = useApp((s) => s.readOnly);
  const attempts = delivery.attempts.filter((a) => a.urlIndex === urlIndex).sort((a, b) => a.startedAt.localeCompare(b.startedAt) || a.id - b.id);
  const url = delivery.urls[urlIndex]?.url ?? attempts[0]?.url ?? '?';
  const last = attempts[attempts.length - 1];
  const actions = delivery.kind === 'actions';
  return (
    <section className="url-timeline" data-testid="url-timeline" data-url={url} data-attempts={attempts.length}>
      <header className="row">
        <span className="mono grow">
          {actions ? `Actions: ${delivery.mapping ?? '?'} · ${delivery.method} ${url}` : `URL ${urlIndex + 1}: ${url}`}
        </span>
        {outcome ? <UrlStateChip outcome={outcome} /> : null}
        <span className="muted">{attempts.length} attempt{attempts.length === 1 ? '' : 's'}</span>
        <button
          type="button"
          className="small"
          // Busy, not disabled, while a replay runs: focus stays on the button (as Replay's, below).
          disabled={readOnly !== null}
          aria-disabled={replaying || undefined}
          title={readOnly ?? undefined}
          data-testid="replay-url"
          // An Actions delivery is named (a batch's callId is its first call's, the same for every member).
          onClick={() => {
            if (!replaying) void store.getState().replay(delivery.callId, urlIndex, actions ? delivery.id : undefined);
          }}
        >
          {actions ? 'Replay this request' : 'Replay this URL'}
        </button>
      </header>
      {outcome?.state === 'in_flight' ? (
        <div className="muted" data-testid="url-in-flight">
          In flight: sent, waiting for the receiver’s answer (at most 5 s, 10 s for Actions or the actions preset).
        </div>
      ) : attempts.length === 0 && delivery.state === 'failed' && delivery.lastError ? (
        // Failed without an attempt: an Actions request whose mapped body passed the limit, never sent.
        <div className="notice error" data-testid="url-not-sent">
          {delivery.lastError}
        </div>
      ) : attempts.length === 0 ? (
        <div className="muted">{outcome?.state === 'not_attempted' ? 'Not attempted: the delivery ended without sending to this URL.' : 'No attempt yet.'}</div>
      ) : null}
      {attempts.map((a, i) => (
        <AttemptView
          key={a.id}
          attempt={a}
          index={i}
          defaultOpen={a === last}
          context={attemptContext(delivery, a, a === last)}
          delivery={delivery}
          raw={raw}
        />
      ))}
      {delivery.state === 'retrying' && last && last.outcome === 'retryable' && delivery.nextAttemptAt ? (
        <div className="notice" data-testid="url-next-retry">
          <RetryTimes delivery={delivery} />
        </div>
      ) : null}
    </section>
  );
}

/** What an attempt's failure led to, read from the other attempts of its round. */
function attemptContext(delivery: DeliveryWithAttempts, a: Attempt, last: boolean) {
  return {
    deliveredByOther: a.outcome !== 'success' && delivery.attempts.some((o) => o.round === a.round && o.urlIndex !== a.urlIndex && o.outcome === 'success'),
    lastBeforeExpiry: last && delivery.state === 'expired',
  };
}

/** The body the delivery sends, shown once for all its attempts (an attempt shows its own only when edited). */
function DeliveryBody({ delivery, raw, setRaw }: { delivery: DeliveryWithAttempts; raw: boolean; setRaw(raw: boolean): void }) {
  const [editing, setEditing] = useState(false);
  const replaying = useApp((s) => s.replaying);
  const readOnly = useApp((s) => s.readOnly);
  const searched = useApp((s) => s.filters.q);
  // A large Actions batch: only its first items came with the detail; the rest is paged.
  const cut = delivery.bodyTruncated;
  return (
    <section className="delivery-body">
      <div className="row">
        <h4 className="grow">Body ({cut ? cut.bytes : byteLength(delivery.body)} B)</h4>
        <button type="button" className="small" onClick={() => setRaw(!raw)} data-testid="toggle-raw" title="Exact bytes sent, or indented and foldable">
          {raw ? 'pretty' : 'raw bytes'}
        </button>
        <button
          type="button"
          className="small"
          data-testid="edit-replay"
          disabled={editing || replaying || cut !== undefined || readOnly !== null}
          onClick={() => setEditing(true)}
          title={
            readOnly
              ? readOnly
              : cut
                ? 'This batch is too large to edit here; Replay this request sends it again as stored'
                : delivery.kind === 'actions'
                  ? 'Edit the body and send it again as a replay of this Actions request'
                  : 'Edit the body and send it to every URL as a replay'
          }
        >
          Edit &amp; replay
        </button>
      </div>
      {editing ? <EditReplay callId={delivery.callId} deliveryId={delivery.kind === 'actions' ? delivery.id : undefined} body={delivery.body} onClose={() => setEditing(false)} /> : null}
      {cut ? <BatchBodyPages key={delivery.id} delivery={delivery} raw={raw} /> : <BodyView text={delivery.body} raw={raw} label="delivery body" testId="delivery-body" highlight={searched} />}
    </section>
  );
}

function DeliveryView({ delivery, allUrls, callId }: { delivery: DeliveryWithAttempts; allUrls: UrlOutcome[]; callId: number }) {
  const besideActions = allUrls.some((u) => u.via);
  const [raw, setRaw] = useState(false);
  // The call's summary lists the Classic URLs, then one entry per Actions delivery carrying it.
  const urls = outcomesOf(delivery, allUrls);
  const warning = deliveryUrlWarning(delivery);
  const urlCount = urlCountOf(delivery);
  // The row says in flight while a round is out (not written to the delivery until it ends).
  const state = urls.some((u) => u.state === 'in_flight') ? 'in_flight' : delivery.state;
  return (
    <section
      className="delivery"
      id={`delivery-${delivery.id}`}
      data-testid="delivery"
      data-state={delivery.state}
      data-kind={delivery.kind}
      data-mapping={delivery.mapping ?? undefined}
      data-method={delivery.method}
    >
      <header className="row wrap">
        <h3 className="grow" data-testid="delivery-title">
          {deliveryTitle(delivery, besideActions)}
        </h3>
        <StatusChip call={{ status: 'accepted', dropReason: null, deliveryState: state, nextAttemptAt: delivery.nextAttemptAt, urls }} />
        {delivery.nextAttemptAt && delivery.state === 'retrying' ? <RetryTimes delivery={delivery} /> : null}
      </header>
      <div className="muted small-text" data-testid="delivery-attempts" data-count={delivery.attemptCount}>
        {delivery.attemptCount} attempt{delivery.attemptCount === 1 ? '' : 's'}
        {delivery.lastError ? ` · last error: ${delivery.lastError}` : ''}
      </div>
      {warning ? (
        <div className="notice warn small-text" data-testid="delivery-url-warning">
          {warning}. The lab delivers to it anyway.
        </div>
      ) : null}
      <BatchMembers delivery={delivery} currentCallId={callId} />
      <DeliveryBody delivery={delivery} raw={raw} setRaw={setRaw} />
      {Array.from({ length: urlCount }, (_, i) => (
        <UrlTimeline key={i} delivery={delivery} urlIndex={i} outcome={urls[i]} raw={raw} />
      ))}
    </section>
  );
}

export function CallDetailView({ detail }: { detail: CallDetail }) {
  const store = useAppStore();
  const replaying = useApp((s) => s.replaying);
  const readOnly = useApp((s) => s.readOnly);
  // What the list was searched for: marked in the bodies below.
  const searched = useApp((s) => s.filters.q);
  const { call, deliveries } = detail;
  const first = deliveries.find((d) => d.kind !== 'actions') ?? deliveries[0];
  const firstAttempt = first?.attempts.filter((a) => a.urlIndex === 0).at(-1);
  const notForwarded = detail.forwarding ? forwardingText(detail.forwarding) : null;
  return (
    <div className="call-detail" data-testid="call-detail" data-call-id={call.id}>
      <header className="detail-header">
        <div className="grow">
          <h2>
            {call.type} {call.label ? <span className="mono">{call.label}</span> : null}
          </h2>
          <div className="muted small-text">
            #{call.id} · {formatDateTime(call.receivedAt)} · source {call.sourceName ?? '(unknown write key)'} · messageId{' '}
            <span className="mono" data-testid="detail-message-id">
              {call.messageId ?? '—'}
            </span>
          </div>
        </div>
        <div className="row">
          <button
            type="button"
            data-testid="replay-button"
            // Not disabled while it replays: a disabled button drops its focus to the page (issue 40).
            disabled={!first || readOnly !== null}
            aria-disabled={replaying || undefined}
            onClick={() => {
              if (!replaying) void store.getState().replay(call.id);
            }}
            title={readOnly ?? (first ? 'Send the stored body again to every URL, re-signed with the current secret' : noReplayReason(call.status))}
          >
            {replaying ? 'Replaying…' : 'Replay'}
          </button>
          {first && !first.bodyTruncated ? <CopyButton text={first.body} label="Copy body" testId="copy-body" className="" /> : null}
          {firstAttempt && !first.bodyTruncated ? <CopyButton text={() => attemptCurl(firstAttempt, first)} label="Copy as cURL" testId="copy-curl" className="" /> : null}
        </div>
      </header>
      {call.status === 'dropped' ? (
        <div className="notice error" data-testid="drop-reason">
          {forwardingText({ forwarded: false, reason: 'dropped' }, call.dropReason)}
        </div>
      ) : null}
      <PlanCheckView detail={detail} />
      <BatchMembership detail={detail} />
      {/* Why an accepted call went nowhere, as the engine judged it (a dropped or blocked one says so above). */}
      {call.status === 'accepted' && notForwarded ? (
        <div className="notice" data-testid="forwarding-reason" data-reason={detail.forwarding.reason}>
          {notForwarded}
        </div>
      ) : null}
      {deliveries.map((d) => (
        <DeliveryView key={d.id} delivery={d} allUrls={detail.urls ?? []} callId={call.id} />
      ))}
      <div className="cols-2">
        <section>
          <h3>As received</h3>
          <div className="muted small-text" data-testid="call-request-meta">
            {call.request.path} · {call.request.contentType ?? 'no content type'}
            {call.request.contentEncoding ? ` (${call.request.contentEncoding})` : ''} · write key from {call.request.writeKeyFrom}
            {call.request.batchIndex !== null ? ` · item ${call.request.batchIndex + 1} of ${call.request.batchSize}` : ''}
            {call.request.userAgent ? ` · ${call.request.userAgent}` : ''}
          </div>
          {call.rawText !== undefined ? (
            <>
              <div className="notice" data-testid="call-raw-text-note">
                Nested more than {MAX_CALL_DEPTH} levels deep: shown as compact text, not indented.
              </div>
              <pre className="body" data-testid="call-raw">{call.rawText}</pre>
            </>
          ) : (
            <BodyView text={JSON.stringify(call.raw, null, 2)} label="call as received" testId="call-raw" highlight={searched} />
          )}
        </section>
        <section>
          <h3>As normalized</h3>
          {call.normalized ? (
            <BodyView text={JSON.stringify(call.normalized, null, 2)} label="call as normalized" testId="call-normalized" />
          ) : (
            <pre className="body" data-testid="call-normalized">{call.normalizedNote ? `(not normalized: ${call.normalizedNote})` : '(not normalized: dropped)'}</pre>
          )}
        </section>
      </div>
    </div>
  );
}

/** Why a call without a delivery has no Replay (the button is disabled; its tooltip says why). */
function noReplayReason(status: string): string {
  if (status === 'blocked') return 'Blocked by its tracking plan: never sent, a replay included';
  if (status === 'dropped') return 'Dropped by the collector: there is nothing to send';
  return 'Nothing to send again: this call was not forwarded (see why below)';
}
