import { STATUS_CODES } from 'node:http';
import type { Attempt, CallSummary } from '../../../shared/types';
import { headerValue } from '../../../shared/header-value';

// HAR 1.2 (http://www.softwareishard.com/blog/har-12-spec/): one entry per webhook attempt, so a
// delivery history opens in browser devtools, Charles, Fiddler or any HAR viewer.

export interface HarHeader {
  name: string;
  value: string;
}

export interface HarEntry {
  startedDateTime: string;
  time: number;
  request: {
    method: string;
    url: string;
    httpVersion: string;
    cookies: never[];
    headers: HarHeader[];
    queryString: HarHeader[];
    postData: { mimeType: string; text: string };
    headersSize: number;
    bodySize: number;
  };
  response: {
    status: number;
    statusText: string;
    httpVersion: string;
    cookies: never[];
    headers: HarHeader[];
    content: { size: number; mimeType: string; text?: string; comment?: string };
    redirectURL: string;
    headersSize: number;
    bodySize: number;
    comment?: string;
  };
  cache: Record<string, never>;
  /** HAR's phases in ms; -1 where not measured (dns; connect and ssl on a reused connection). `connect` includes `ssl`. */
  timings: { blocked: number; dns: number; connect: number; ssl: number; send: number; wait: number; receive: number };
  comment?: string;
  /** Custom fields must start with `_` (HAR 1.2 §"Custom fields"). */
  _webhookLab: {
    callId: number;
    messageId: string | null;
    deliveryId: number;
    attemptId: number;
    round: number;
    urlIndex: number;
    trigger: Attempt['trigger'];
    signature: string | null;
    outcome: Attempt['outcome'];
    errorCode: string | null;
    errorMessage: string | null;
    timedOut: boolean;
    timeoutMs: Attempt['timeoutMs'];
    tlsError: Attempt['tlsError'];
    connectError: Attempt['connectError'];
  };
}

export interface Har {
  log: { version: '1.2'; creator: { name: string; version: string }; entries: HarEntry[] };
}

const headerList = (h: Record<string, string> | null): HarHeader[] => Object.entries(h ?? {}).map(([name, value]) => ({ name, value: String(value) }));

const headerOf = (h: Record<string, string> | null, name: string): string | undefined => (h ? headerValue(h, name) : undefined);

function queryString(url: string): HarHeader[] {
  try {
    return [...new URL(url).searchParams].map(([name, value]) => ({ name, value }));
  } catch {
    return [];
  }
}

const round1 = (v: number) => Math.round(v * 10) / 10;

/**
 * The attempt's recorded phases as HAR timings: connect (TCP, plus TLS, which ssl also reports) on a
 * new connection, wait until the first response byte, receive until the end. An attempt with no
 * recorded timing (from before timings were kept, or no socket) reports its whole time as wait.
 */
export function harTimings(a: Pick<Attempt, 'durationMs' | 'timing'>): HarEntry['timings'] {
  const t = a.timing;
  if (!t) return { blocked: -1, dns: -1, connect: -1, ssl: -1, send: 0, wait: Math.max(0, a.durationMs), receive: 0 };
  const connect = t.connectMs === null ? -1 : round1(t.connectMs + (t.tlsMs ?? 0));
  const before = connect === -1 ? 0 : connect;
  const firstByte = t.ttfbMs ?? t.totalMs;
  return {
    blocked: -1,
    dns: -1,
    connect,
    ssl: t.tlsMs ?? -1,
    send: 0,
    wait: round1(Math.max(0, firstByte - before)),
    receive: round1(Math.max(0, t.totalMs - Math.max(firstByte, before))),
  };
}

/** The HAR entry of one attempt of the call `call`, which sent `sentBody` (shared/attempt-body.ts: HAR wants it on each entry). */
export function harEntry(call: Pick<CallSummary, 'id' | 'messageId'>, a: Attempt, sentBody: string): HarEntry {
  const responseBody = a.responseBody ?? '';
  const bodyBytes = Buffer.byteLength(responseBody);
  const declared = Number(headerOf(a.responseHeaders, 'content-length'));
  const answered = a.responseStatus !== null;
  const timings = harTimings(a);
  return {
    startedDateTime: a.startedAt,
    // HAR: the sum of the phases, ssl aside (connect includes it), -1s left out.
    time: round1(timings.connect + timings.send + timings.wait + timings.receive + (timings.connect === -1 ? 1 : 0)),
    request: {
      method: a.method,
      url: a.url,
      httpVersion: 'HTTP/1.1',
      cookies: [],
      headers: headerList(a.requestHeaders),
      queryString: queryString(a.url),
      postData: { mimeType: headerOf(a.requestHeaders, 'content-type') ?? 'application/json', text: sentBody },
      headersSize: -1,
      bodySize: Buffer.byteLength(sentBody),
    },
    response: {
      // HAR has no "no response": status 0 with the error as statusText, as browsers export failed requests.
      status: a.responseStatus ?? 0,
      statusText: answered ? (STATUS_CODES[a.responseStatus!] ?? '') : (a.errorMessage ?? a.errorCode ?? 'no response'),
      httpVersion: answered ? 'HTTP/1.1' : '',
      cookies: [],
      headers: headerList(a.responseHeaders),
      content: {
        // The dispatcher keeps at most 64 KB of a response body; the size is the real one when the receiver declared it.
        size: a.responseTruncated && Number.isFinite(declared) ? declared : bodyBytes,
        mimeType: headerOf(a.responseHeaders, 'content-type') ?? '',
        ...(answered ? { text: responseBody } : {}),
        ...(a.responseTruncated ? { comment: `truncated: only the first ${bodyBytes} bytes were kept` } : {}),
      },
      redirectURL: headerOf(a.responseHeaders, 'location') ?? '',
      headersSize: -1,
      bodySize: answered ? (a.responseTruncated ? (Number.isFinite(declared) ? declared : -1) : bodyBytes) : -1,
    },
    cache: {},
    timings,
    ...(a.timedOut ? { comment: 'timed out' } : {}),
    _webhookLab: {
      callId: call.id,
      messageId: call.messageId,
      deliveryId: a.deliveryId,
      attemptId: a.id,
      round: a.round,
      urlIndex: a.urlIndex,
      trigger: a.trigger,
      signature: a.signature,
      outcome: a.outcome,
      errorCode: a.errorCode,
      errorMessage: a.errorMessage,
      timedOut: a.timedOut,
      timeoutMs: a.timeoutMs,
      tlsError: a.tlsError,
      connectError: a.connectError,
    },
  };
}

/** A HAR document is this, the entries joined by commas, then HAR_TAIL: written as entries are read. */
export function harHead(creatorVersion: string): string {
  const log = JSON.stringify({ version: '1.2', creator: { name: 'Webhook Lab', version: creatorVersion } }).slice(0, -1);
  return `{"log":${log},"entries":[`;
}

export const HAR_TAIL = ']}}\n';
