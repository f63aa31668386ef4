import { STATUS_CODES } from 'node:http';
import type { Attempt, CallSummary } from '../../../shared/types';

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
  timings: { send: number; wait: number; receive: number };
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
  };
}

export interface Har {
  log: { version: '1.2'; creator: { name: string; version: string }; entries: HarEntry[] };
}

const headerList = (h: Record<string, string> | null): HarHeader[] => Object.entries(h ?? {}).map(([name, value]) => ({ name, value: String(value) }));

function headerValue(h: Record<string, string> | null, name: string): string | undefined {
  if (!h) return undefined;
  const key = Object.keys(h).find((k) => k.toLowerCase() === name);
  return key === undefined ? undefined : h[key];
}

function queryString(url: string): HarHeader[] {
  try {
    return [...new URL(url).searchParams].map(([name, value]) => ({ name, value }));
  } catch {
    return [];
  }
}

/** The HAR entry of one attempt of the call `call`. */
export function harEntry(call: Pick<CallSummary, 'id' | 'messageId'>, a: Attempt): HarEntry {
  const responseBody = a.responseBody ?? '';
  const bodyBytes = Buffer.byteLength(responseBody);
  const declared = Number(headerValue(a.responseHeaders, 'content-length'));
  const answered = a.responseStatus !== null;
  const duration = Math.max(0, a.durationMs);
  return {
    startedDateTime: a.startedAt,
    time: duration,
    request: {
      method: a.method,
      url: a.url,
      httpVersion: 'HTTP/1.1',
      cookies: [],
      headers: headerList(a.requestHeaders),
      queryString: queryString(a.url),
      postData: { mimeType: headerValue(a.requestHeaders, 'content-type') ?? 'application/json', text: a.requestBody },
      headersSize: -1,
      bodySize: Buffer.byteLength(a.requestBody),
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
        mimeType: headerValue(a.responseHeaders, 'content-type') ?? '',
        ...(answered ? { text: responseBody } : {}),
        ...(a.responseTruncated ? { comment: `truncated: only the first ${bodyBytes} bytes were kept` } : {}),
      },
      redirectURL: headerValue(a.responseHeaders, 'location') ?? '',
      headersSize: -1,
      bodySize: answered ? (a.responseTruncated ? (Number.isFinite(declared) ? declared : -1) : bodyBytes) : -1,
    },
    cache: {},
    // Only the whole exchange is measured: it is reported as waiting for the response.
    timings: { send: 0, wait: duration, receive: 0 },
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
    },
  };
}

/** A HAR document is this, the entries joined by commas, then HAR_TAIL: written as entries are read. */
export function harHead(creatorVersion: string): string {
  const log = JSON.stringify({ version: '1.2', creator: { name: 'Webhook Lab', version: creatorVersion } }).slice(0, -1);
  return `{"log":${log},"entries":[`;
}

export const HAR_TAIL = ']}}\n';
