import { gunzipSync, inflateSync } from 'node:zlib';
import { MAX_BATCH_BYTES, MAX_CALL_BYTES } from '../../../shared/limits';

/** The most bytes a request body of the route may hold, and the answer for one over it (compressed or not). */
export const bodyLimit = (batch: boolean): number => (batch ? MAX_BATCH_BYTES : MAX_CALL_BYTES);
export function bodyTooLarge(batch: boolean): string {
  return batch
    ? `batch is larger than ${MAX_BATCH_BYTES} bytes (${MAX_BATCH_BYTES / 1024} KB), the limit for a batch request`
    : `call is larger than ${MAX_CALL_BYTES} bytes (${MAX_CALL_BYTES / 1024} KB), the limit for a single call`;
}

/** What a request body decodes to: the bytes as sent by the client before compression, or why not. */
export type Decoded = { ok: true; body: Buffer | undefined; encoding: string | null } | { ok: false; status: 400 | 415; message: string };

/**
 * A compressed request body (`Content-Encoding: gzip`, as Segment's libraries send when asked, e.g.
 * analytics-python's `gzip=True`; `deflate` too), decoded before anything else reads it. The route's
 * limit applies to the decoded bytes, and zlib stops at it (maxOutputLength), so a small body that
 * inflates to gigabytes costs at most the limit. `identity` or no header: the body as it came.
 * The over-limit answer is the route's own, as for an uncompressed body.
 */
export function decodeBody(body: Buffer | undefined, header: string | undefined, batch: boolean): Decoded {
  const encoding = header?.trim().toLowerCase() ?? '';
  if (encoding === '' || encoding === 'identity') return { ok: true, body, encoding: null };
  const inflate = encoding === 'gzip' || encoding === 'x-gzip' ? gunzipSync : encoding === 'deflate' ? inflateSync : null;
  if (!inflate) {
    return { ok: false, status: 415, message: `unsupported Content-Encoding "${printable(header ?? '')}": send the body as it is, or compressed with gzip or deflate` };
  }
  if (!body || body.length === 0) return { ok: true, body, encoding };
  try {
    return { ok: true, body: inflate(body, { maxOutputLength: bodyLimit(batch) }), encoding };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE' || err instanceof RangeError) return { ok: false, status: 400, message: `${bodyTooLarge(batch)} once decompressed (Content-Encoding: ${encoding})` };
    return { ok: false, status: 400, message: `body is not valid ${encoding} data (Content-Encoding: ${encoding}): ${(err as Error).message}` };
  }
}

/** A header value echoed in a message: control characters and anything past 64 characters left out. */
function printable(value: string): string {
  const clean = value.replace(/[^\x20-\x7e]/g, '?');
  return clean.length > 64 ? `${clean.slice(0, 64)}…` : clean;
}
