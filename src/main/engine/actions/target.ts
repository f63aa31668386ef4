import { transform } from '@segment/actions-core';
import { MAX_RECEIVER_URL_CHARS } from '../../../shared/limits';
import { isActionsHeaderValue, receiverUrlProblem } from '../../../shared/source.schema';
import type { ActionsMapping, MappingValue, NormalizedCall } from '../../../shared/types';
import { MappingFailed, NotSentError } from './mapping-kit';
import { segmentUrlProblem, UrlNotAUri } from './url-field';

// Where a mapping's request goes: its URL and headers, each text or a directive the mapping kit
// resolves against the call (issue 37, item 2: Segment's webhook destination takes
// `{"@template": "https://r.example/t/{{userId}}"}` as the url and `{"@path": "$.userId"}` as a header
// value). Resolved as Segment's action resolves its fields: by `transform` on the call, then the
// payload's url checked against the send action's field (format: 'uri'); a value that resolves to
// nothing leaves its header out, any other becomes its text as fetch's Headers makes it.

export interface ActionsTarget {
  url: string;
  headers: Record<string, string>;
}

/** Whether the URL and every header value are text: the same target for every call. */
export function isStaticTarget(m: Pick<ActionsMapping, 'url' | 'headers'>): m is Pick<ActionsMapping, 'url' | 'headers'> & ActionsTarget {
  if (typeof m.url !== 'string') return false;
  for (const name in m.headers) if (typeof m.headers[name] !== 'string') return false;
  return true;
}

/** A mapping value as one line for lists and for a delivery never sent: text as is, a directive as its JSON. */
function describeValue(v: MappingValue): string {
  return typeof v === 'string' ? v : JSON.stringify(v);
}

/**
 * A mapping's URL and headers as written, directives as their JSON: where a batch queued under its
 * literal URL goes, and what a never-sent delivery keeps when its URL or headers did not resolve.
 */
export function writtenTarget(m: Pick<ActionsMapping, 'url' | 'headers'>): ActionsTarget {
  return { url: describeValue(m.url), headers: Object.fromEntries(Object.entries(m.headers).map(([k, v]) => [k, describeValue(v)])) };
}

/** Thrown when the resolved URL or a header value cannot be sent: the request is not sent. */
export class TargetNotSendable extends NotSentError {
  constructor(message: string) {
    super(message);
    this.name = 'TargetNotSendable';
  }
}

/**
 * The most header bytes (names and values) a mapping's directives may resolve to for one call: Node's
 * and most servers' limit (they answer 431 past it), and what keeps a template from making megabytes
 * of headers that every attempt would store and send again. Literal headers are sent as written.
 */
export const MAX_ACTIONS_HEADER_BYTES = 16 * 1024;

function headerBytes(headers: Record<string, string>): number {
  let n = 0;
  for (const name in headers) n += name.length + headers[name].length + 4;
  return n;
}

function tooManyHeaderBytes(headers: Record<string, string>): void {
  const n = headerBytes(headers);
  if (n > MAX_ACTIONS_HEADER_BYTES) {
    throw new TargetNotSendable(`the mapping's headers come to ${n.toLocaleString('en-US')} bytes for this call; the lab sends at most ${MAX_ACTIONS_HEADER_BYTES.toLocaleString('en-US')} (16 KB: Node's and most servers' limit, past which they answer 431)`);
  }
}

/**
 * The mapping's URL and headers for this call. Throws a NotSentReason where Segment sends nothing:
 * the URL (as written or resolved) fails the send action's validation, the kit fails, or the lab
 * cannot send to what it resolved to (not http(s), control characters, a header value fetch refuses).
 */
export function resolveTarget(m: Pick<ActionsMapping, 'url' | 'headers'>, call: NormalizedCall): ActionsTarget {
  if (isStaticTarget(m)) {
    const problem = segmentUrlProblem(m.url);
    if (problem !== null) throw new UrlNotAUri(problem);
    return { url: m.url, headers: m.headers };
  }
  let out: { url?: unknown; headers?: Record<string, unknown> };
  try {
    out = transform({ url: m.url, headers: m.headers } as never, call as never) as typeof out;
  } catch (err) {
    throw new MappingFailed(err instanceof Error ? err.message : String(err));
  }
  const url = out.url;
  // Segment's own message for a url that is missing or not text, as for one that is no valid URI;
  // the length first (Segment's URI format check overflows the stack on megabytes).
  if (typeof url === 'string' && url.length > MAX_RECEIVER_URL_CHARS) {
    throw new TargetNotSendable(`the mapping's URL resolved to ${url.length.toLocaleString('en-US')} characters for this call; a URL is at most ${MAX_RECEIVER_URL_CHARS} (2 KB)`);
  }
  const problem = segmentUrlProblem(url);
  if (problem !== null) {
    if (typeof url === 'string') throw new UrlNotAUri(problem);
    throw new TargetNotSendable(`the mapping's URL resolved to ${url === undefined ? 'nothing' : `${Array.isArray(url) ? 'an array' : typeof url}`} for this call, and Segment's payload validation refuses it: ${problem} Segment sends nothing for it`);
  }
  const resolved = url as string;
  const unsendable = receiverUrlProblem(resolved);
  if (unsendable !== null) throw new TargetNotSendable(`the mapping's URL resolved to ${JSON.stringify(resolved.slice(0, 200))}, which cannot be sent to (${unsendable})`);
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(out.headers ?? {})) {
    if (value === undefined) continue;
    const text = `${value as string}`;
    if (!isActionsHeaderValue(text)) {
      throw new TargetNotSendable(`header "${name}" resolved to ${JSON.stringify(text.slice(0, 200))}, which Segment's request client cannot send (only ASCII: printable characters, space and tab)`);
    }
    headers[name] = text;
  }
  tooManyHeaderBytes(headers);
  return { url: resolved, headers };
}
