import { useState } from 'react';
import type { Attempt } from '../../../shared/types';
import { curlCommand } from '../../../shared/preview/curl';
import { CopyButton } from '../../components/copy-button';
import { formatDateTime, formatMs, prettyJson } from '../../components/format';
import { explainAttempt, outcomeLabel, type AttemptContext } from './explain';
import { VerifyBox } from './verify-box';
import { HeadersTable as Headers } from '../../components/headers-table';

export function attemptCurl(a: Attempt): string {
  return curlCommand({ url: a.url, headers: a.requestHeaders, body: a.requestBody });
}

export function AttemptView({ attempt: a, index, defaultOpen, context }: { attempt: Attempt; index: number; defaultOpen: boolean; context?: AttemptContext }) {
  const [raw, setRaw] = useState(false);
  const why = explainAttempt(a, context);
  return (
    <details className={`attempt attempt-${a.outcome}`} open={defaultOpen} data-testid="attempt" data-outcome={a.outcome} data-trigger={a.trigger}>
      <summary>
        <span className="attempt-no">#{index + 1}</span>
        <span className={`chip chip-outcome-${a.outcome}`} data-testid="attempt-outcome">
          {outcomeLabel(a)}
        </span>
        <span className="muted">round {a.round}</span>
        <span className="muted">{a.trigger}</span>
        <span className="muted">{formatDateTime(a.startedAt)}</span>
        <span className="muted">{formatMs(a.durationMs)}</span>
      </summary>
      <div className="attempt-body">
        {why ? (
          <div className={`notice ${a.outcome === 'success' ? '' : 'error'}`} data-testid="attempt-explain">
            {why}
          </div>
        ) : null}
        <div className="cols-2">
          <section>
            <h4>Request</h4>
            <Headers headers={a.requestHeaders} />
            <div className="row">
              <h4 className="grow">Body ({new TextEncoder().encode(a.requestBody).length} B)</h4>
              <button type="button" className="small" onClick={() => setRaw(!raw)} data-testid="toggle-raw">
                {raw ? 'pretty' : 'raw bytes'}
              </button>
              <CopyButton text={a.requestBody} label="Copy body" />
              <CopyButton text={() => attemptCurl(a)} label="Copy as cURL" />
            </div>
            <pre className="body" data-testid="attempt-body">{raw ? a.requestBody : prettyJson(a.requestBody)}</pre>
            <h4>Signature</h4>
            <div className="mono" data-testid="attempt-signature">
              {a.signature ?? 'none (no shared secret)'}
            </div>
            <VerifyBox body={a.requestBody} signature={a.signature} />
          </section>
          <section>
            <h4>Response</h4>
            {a.responseStatus !== null ? (
              <>
                <div data-testid="attempt-status">
                  HTTP {a.responseStatus} · {formatMs(a.durationMs)}
                </div>
                <Headers headers={a.responseHeaders} />
                <pre className="body">{a.responseBody ? prettyJson(a.responseBody) : '(empty body)'}</pre>
                {a.responseTruncated ? <div className="muted">… truncated at 64 KB</div> : null}
              </>
            ) : (
              <div className="muted">
                {a.timedOut ? 'no answer within 5 s' : `no HTTP response${a.errorMessage ? `: ${a.errorMessage}` : ''}`}
              </div>
            )}
          </section>
        </div>
      </div>
    </details>
  );
}
