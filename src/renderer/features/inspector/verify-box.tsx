import { useState } from 'react';
import { verifySignature, type VerifyResult } from '../../../shared/preview/signature';

/** Paste a secret, see whether the attempt's X-Signature matches the exact bytes sent, and why not. */
export function VerifyBox({ body, signature }: { body: string; signature: string | null }) {
  const [secret, setSecret] = useState('');
  const [result, setResult] = useState<VerifyResult | null>(null);
  const check = async () => setResult(await verifySignature({ body, signature, secret }));
  return (
    <div className="verify-box" data-testid="verify-box">
      <div className="row">
        <input
          type="text"
          placeholder="paste the shared secret"
          value={secret}
          data-testid="verify-secret"
          spellCheck={false}
          autoComplete="off"
          onChange={(e) => {
            setSecret(e.target.value);
            setResult(null);
          }}
          onKeyDown={(e) => e.key === 'Enter' && void check()}
        />
        <button type="button" className="small" data-testid="verify-button" onClick={() => void check()}>
          Verify
        </button>
      </div>
      {result ? (
        <div className={`verify-result verify-${result.status}`} data-testid="verify-result" data-status={result.status}>
          <div>{result.explanation}</div>
          {result.computed ? (
            <div className="mono small-text">
              computed {result.computed}
              <br />
              received {signature ?? '(none)'}
            </div>
          ) : null}
        </div>
      ) : null}
    </div>
  );
}
