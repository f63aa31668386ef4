import { CodeBlock } from '../../components/code-block';
import { prettyJson } from '../../components/format';
import { maskUrlPassword } from '../../../shared/url-credentials';
import { forwardingText } from '../../../shared/forwarding';
import type { RequestPreview } from './destination-previews';
import type { Previews } from './use-previews';

const headerLines = (h: Record<string, string>) => Object.entries(h).map(([k, v]) => `${k}: ${v}`).join('\n');
// A body that resolved to nothing (Actions) is sent empty.
const bodyText = (body: string) => (body === '' ? '(no body)' : prettyJson(body));

/** One request the destination would send: the Classic one keeps the test ids it always had. */
function RequestPane({ r, i }: { r: RequestPreview; i: number }) {
  const classic = r.kind === 'classic';
  const id = classic ? 'preview-webhook' : `preview-actions-${i}`;
  return (
    <div className="preview-request" data-testid={classic ? 'preview-classic' : 'preview-actions'} data-mapping={classic ? undefined : r.title}>
      <CodeBlock
        testId={id}
        title={
          <>
            {classic ? 'Classic' : <>Actions · {r.title}</>}: {r.method}
            {r.url ? (
              <>
                {' '}
                → <code>{maskUrlPassword(r.url)}</code>
              </>
            ) : null}
            {r.moreUrls > 0 ? ` (and ${r.moreUrls} more URL${r.moreUrls > 1 ? 's' : ''}, the same request)` : ''}
          </>
        }
        text={`${headerLines(r.headers)}\n\n${bodyText(r.body)}`}
        extra={
          <span className="muted small-text" data-testid={classic ? 'preview-signature' : `preview-actions-signature-${i}`}>
            {r.signature ? `X-Signature ${r.signature}` : classic ? 'unsigned (no shared secret)' : ''}
          </span>
        }
      />
      <div className="preview-notes small-text">
        {r.trigger ? <div className="muted">trigger: {r.trigger}</div> : null}
        <div data-testid={classic ? 'preview-signature-note' : `preview-actions-note-${i}`}>{r.signatureNote}</div>
        {r.signedText !== null && r.signature ? (
          <div>
            signed text ({new TextEncoder().encode(r.signedText).length} B):
            {/* Bounded: a whole event as one line of JSON otherwise pushes everything else far down. */}
            <code className="signed-text" data-testid={`preview-actions-signed-${i}`} tabIndex={0} role="region" aria-label="signed text">
              {r.signedText}
            </code>
          </div>
        ) : null}
        {r.batchNote ? (
          <div className="notice" data-testid={`preview-actions-batch-${i}`}>
            {r.batchNote}
          </div>
        ) : null}
        {r.urlWarning ? (
          <div className="notice warn" data-testid={`preview-actions-url-warning-${i}`}>
            {r.urlWarning}; the lab still delivers to it.
          </div>
        ) : null}
      </div>
    </div>
  );
}

export function PreviewPanes({ previews, invalid }: { previews: Previews; invalid: number }) {
  const w = previews.webhook;
  const d = previews.destinations;
  const classicOnly: RequestPreview | null =
    !d && w
      ? {
          kind: 'classic',
          title: 'Classic',
          method: 'POST',
          url: previews.webhookUrl,
          moreUrls: 0,
          headers: w.headers,
          body: w.body,
          signature: w.signature,
          signatureNote: w.signature ? 'X-Signature = HMAC-SHA1(shared secret, the body bytes)' : 'unsigned (no shared secret)',
          signedText: null,
          batchNote: null,
          urlWarning: null,
          trigger: null,
        }
      : null;
  const requests = d ? d.requests : classicOnly ? [classicOnly] : [];
  const classic = requests.find((r) => r.kind === 'classic');
  const actions = requests.filter((r) => r.kind !== 'classic');
  return (
    <div className="previews">
      {invalid > 0 ? (
        <div className="notice warn" data-testid="preview-invalid">
          The call is not valid yet ({invalid} problem{invalid > 1 ? 's' : ''}); the previews show it as it stands.
        </div>
      ) : null}
      {!w ? <CodeBlock testId="preview-webhook" title="Webhook request" text="computing…" /> : null}
      {/* Classic in the left column, the Actions requests stacked in the right one (one column when narrow). */}
      <div className="preview-requests" data-testid="preview-requests">
        {classic ? (
          <div className="preview-column">
            <RequestPane r={classic} i={0} />
          </div>
        ) : null}
        {actions.length > 0 ? (
          <div className="preview-column">
            {actions.map((r, i) => (
              <RequestPane key={r.title} r={r} i={i} />
            ))}
          </div>
        ) : null}
      </div>
      {/* The inspector's sentence for a call not forwarded (shared/forwarding.ts). */}
      {d && !d.forwarding.forwarded ? (
        <div className="notice" data-testid="preview-no-request" data-reason={d.forwarding.reason}>
          {forwardingText(d.forwarding)}
          {d.requests.length > 0 ? ' Shown here: what it would send otherwise.' : ''}
        </div>
      ) : null}
      {d && d.forwarding.forwarded && d.skipped.length > 0 ? (
        <div className="muted small-text" data-testid="preview-skipped">
          Not matching this call: {d.skipped.map((s) => `${s.name} (${s.trigger})`).join('; ')}
        </div>
      ) : null}
      {d?.sw ? (
        <div className="muted small-text" data-testid="preview-sw-note">
          Standard Webhooks: webhook-id <code>{d.sw.id}</code> and webhook-timestamp <code>{d.sw.timestamp}</code> are examples. The lab makes
          the id once per delivery (its retries keep it) and the timestamp, and so webhook-signature (v1, HMAC-SHA256 over
          id.timestamp.body), at each attempt.
        </div>
      ) : null}
      {classic ? (
        <details className="raw-bytes">
          <summary data-testid="preview-raw-toggle">Exact Classic body bytes ({new TextEncoder().encode(classic.body).length} B, what its X-Signature covers)</summary>
          <pre data-testid="preview-webhook-raw">{classic.body}</pre>
        </details>
      ) : null}
      <CodeBlock testId="preview-http" title="HTTP API request (client → collector)" text={previews.http} />
      <CodeBlock testId="preview-go" title="Go (analytics-go v2)" text={previews.go} />
    </div>
  );
}
