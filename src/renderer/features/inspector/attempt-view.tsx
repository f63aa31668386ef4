import type { Attempt, Delivery } from '../../../shared/types';
import { sentBody, sentOwnBody } from '../../../shared/attempt-body';
import { curlCommand } from '../../../shared/preview/curl';
import { CopyButton } from '../../components/copy-button';
import { formatDateTime, formatMs } from '../../components/format';
import { BodyView } from '../../components/lazy-json-view';
import { attemptTimeout, explainAttempt, outcomeLabel, type AttemptContext } from './explain';
import { VerifyBox } from './verify-box';
import { signatureTarget } from './verify-model';
import { HeadersTable as Headers } from '../../components/headers-table';
import { AttemptTimingView } from './attempt-timing';
import { attemptOffset } from './attempt-offset';
import { useApp } from '../../store-context';

/** The attempt as a curl command: the body it sent, with its delivery's method (Actions: POST, PUT or PATCH). */
export function attemptCurl(a: Attempt, delivery: Pick<Delivery, 'body' | 'method'>): string {
  return curlCommand({ method: delivery.method, url: a.url, headers: a.requestHeaders, body: sentBody(delivery, a) });
}

export const byteLength = (text: string) => new TextEncoder().encode(text).length;

/**
 * One attempt: its headers, signature, response and timing. The body is the delivery's, shown once
 * above the attempts (DeliveryBody); an attempt shows its own only when it differs (a replay with an
 * edited body).
 */
export function AttemptView({
  attempt: a,
  index,
  defaultOpen,
  context,
  delivery,
  raw,
}: {
  attempt: Attempt;
  /** The body it sent unless edited; which request it is (an Actions batch's X-Signature covers only its first event's data). */
  delivery: Pick<Delivery, 'body' | 'kind' | 'callId' | 'callIds' | 'method' | 'bodyTruncated' | 'swVersion' | 'firstAttemptAt'>;
  index: number;
  defaultOpen: boolean;
  context?: AttemptContext;
  raw: boolean;
}) {
  const why = explainAttempt(a, context);
  // An opened export is a file: its attempts are not the lab's to check.
  const readOnly = useApp((s) => s.readOnly !== null);
  const offset = attemptOffset(a.startedAt, useApp((s) => s.detail?.call.receivedAt), a.simOffsetMs, delivery.firstAttemptAt);
  const body = sentBody(delivery, a);
  const edited = sentOwnBody(delivery, a);
  // Unedited, a large batch's attempt carries only the batch's first items (as its delivery does).
  const bodyCut = !edited && delivery.bodyTruncated !== undefined;
  return (
    <details className={`attempt attempt-${a.outcome}`} open={defaultOpen} data-testid="attempt" data-outcome={a.outcome} data-trigger={a.trigger} data-edited={edited}>
      <summary>
        <span className="attempt-no">#{index + 1}</span>
        <span className={`chip chip-outcome-${a.outcome}`} data-testid="attempt-outcome">
          {outcomeLabel(a)}
        </span>
        <span className="muted">round {a.round}</span>
        <span className="muted">{a.trigger}</span>
        {edited ? <span className="chip chip-edited">edited body</span> : null}
        <span className="muted">{formatDateTime(a.startedAt)}</span>
        {offset ? (
          <span className="muted" data-testid="attempt-offset" title="From the call's arrival; under a time warp, where it fell in the retry schedule's simulated time too">
            {offset}
          </span>
        ) : null}
        <span className="muted">{formatMs(a.durationMs)}</span>
      </summary>
      <div className="attempt-body">
        {why ? (
          <div className={`notice ${a.outcome === 'success' ? '' : 'error'}`} data-testid="attempt-explain">
            {why}
          </div>
        ) : null}
        <AttemptTimingView attempt={a} />
        <div className="cols-2">
          <section>
            <div className="row">
              <h4 className="grow">Request</h4>
              {bodyCut ? null : <CopyButton text={() => attemptCurl(a, delivery)} label="Copy as cURL" />}
            </div>
            <Headers headers={a.requestHeaders} />
            {edited ? (
              <>
                <div className="row">
                  <h4 className="grow">Edited body ({byteLength(body)} B)</h4>
                  <CopyButton text={body} label="Copy edited body" testId="attempt-copy-edited" />
                </div>
                <BodyView text={body} raw={raw} label={`attempt ${index + 1} body`} testId="attempt-body" />
              </>
            ) : null}
            <h4>Signature</h4>
            <div className="mono" data-testid="attempt-signature">
              {a.signature ?? 'none (no shared secret)'}
            </div>
            <VerifyBox
              body={body}
              signature={a.signature}
              headers={a.requestHeaders}
              target={signatureTarget(delivery, body)}
              bodyCut={bodyCut}
              signed={{ swVersion: delivery.swVersion ?? null, at: delivery.firstAttemptAt ?? a.startedAt, lab: readOnly || a.id < 1 ? undefined : { callId: delivery.callId, attemptId: a.id } }}
            />
          </section>
          <section>
            <h4>Response</h4>
            {a.responseStatus !== null ? (
              <>
                <div data-testid="attempt-status">
                  HTTP {a.responseStatus} · {formatMs(a.durationMs)}
                </div>
                <Headers headers={a.responseHeaders} />
                {a.responseBody ? (
                  <BodyView text={a.responseBody} raw={raw} label={`attempt ${index + 1} response`} testId="attempt-response-body" maxHeight="200px" />
                ) : (
                  <pre className="body">(empty body)</pre>
                )}
                {a.responseTruncated ? <div className="muted">… truncated at 64 KB</div> : null}
              </>
            ) : (
              <div className="muted">
                {a.timedOut ? `no answer within ${attemptTimeout(a)}` : `no HTTP response${a.errorMessage ? `: ${a.errorMessage}` : ''}`}
              </div>
            )}
          </section>
        </div>
      </div>
    </details>
  );
}
