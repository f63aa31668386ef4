import { isIP } from 'node:net';
import type { CheckResult } from './checks';
import type { ProbeAnswer } from './probe-sender';

/**
 * Transport, judged from the run's first request (and, when the certificate was refused, that
 * refusal): an untrusted certificate fails, because Segment refuses it; plain http and addresses
 * only this machine reaches warn, never fail, because they can only be tested locally; a redirect
 * warns, because neither the lab nor (as far as it is documented) Segment follows one.
 */
export function judgeTransport(url: URL, first: ProbeAnswer, tlsRefused: ProbeAnswer | null): CheckResult {
  const evidence = tlsRefused ? [tlsRefused.evidence, first.evidence] : [first.evidence];
  if (tlsRefused) {
    const why = tlsRefused.result.errorMessage ?? tlsRefused.result.errorCode ?? 'TLS error';
    return {
      verdict: 'fail',
      detail: `Segment refuses this certificate (${why}) and does not retry: no event would arrive. The other checks ran without checking it.`,
      evidence,
    };
  }
  const notes: string[] = [];
  const s = first.result.status;
  if (s !== null && s >= 300 && s < 400) {
    const to = first.result.responseHeaders?.location;
    notes.push(
      `answered HTTP ${s}${to ? ` to ${to}` : ''}: the lab does not follow redirects and records the delivery as failed, not retried; Segment documents nothing for Classic Webhooks, and its Actions request client follows them as fetch does (a 301, 302 or 303 turns the POST into a GET without its body): give Segment the final URL`,
    );
  }
  if (url.protocol === 'http:') notes.push('plain http: anyone on the way can read and change the events; use https in production');
  if (localOnly(url.hostname)) notes.push(`${url.hostname} is reachable from this machine only, not from Segment: test here, then probe the public URL`);
  if (notes.length > 0) return { verdict: 'warn', detail: notes.join('; '), evidence };
  return { verdict: 'pass', detail: 'https with a trusted certificate, answered directly', evidence };
}

/** Loopback, private, link-local and .local names: addresses Segment's servers cannot reach. */
export function localOnly(hostname: string): boolean {
  const h = hostname.replace(/^\[|\]$/g, '').toLowerCase();
  if (h === 'localhost' || h.endsWith('.localhost') || h.endsWith('.local') || h.endsWith('.internal')) return true;
  const v = isIP(h);
  if (v === 4) {
    const [a, b] = h.split('.').map(Number);
    return a === 127 || a === 10 || a === 0 || (a === 172 && b >= 16 && b <= 31) || (a === 192 && b === 168) || (a === 169 && b === 254);
  }
  if (v === 6) return h === '::1' || h === '::' || h.startsWith('fc') || h.startsWith('fd') || h.startsWith('fe80');
  return false;
}
