import { CodeBlock } from '../../components/code-block';
import { prettyJson } from '../../components/format';
import type { Previews } from './use-previews';

export function PreviewPanes({ previews, invalid }: { previews: Previews; invalid: number }) {
  const w = previews.webhook;
  const headerText = w ? Object.entries(w.headers).map(([k, v]) => `${k}: ${v}`).join('\n') : '';
  return (
    <div className="previews">
      {invalid > 0 ? (
        <div className="notice warn" data-testid="preview-invalid">
          The call is not valid yet ({invalid} problem{invalid > 1 ? 's' : ''}); the previews show it as it stands.
        </div>
      ) : null}
      <CodeBlock
        testId="preview-webhook"
        title={
          <>
            Webhook body{previews.webhookUrl ? <> → <code>{previews.webhookUrl}</code></> : null}
          </>
        }
        text={w ? `${headerText}\n\n${prettyJson(w.body)}` : 'computing…'}
        extra={
          <span className="muted small-text" data-testid="preview-signature">
            {w?.signature ? `X-Signature ${w.signature}` : previews.hasSecret ? '' : 'unsigned (no shared secret)'}
          </span>
        }
      />
      {w ? (
        <details className="raw-bytes">
          <summary data-testid="preview-raw-toggle">Exact body bytes ({new TextEncoder().encode(w.body).length} B, what the signature covers)</summary>
          <pre data-testid="preview-webhook-raw">{w.body}</pre>
        </details>
      ) : null}
      <CodeBlock testId="preview-http" title="HTTP API request (client → collector)" text={previews.http} />
      <CodeBlock testId="preview-go" title="Go (analytics-go v2)" text={previews.go} />
    </div>
  );
}
