import { gunzipSync, inflateRawSync, inflateSync } from 'node:zlib';
import { MAX_BATCH_BYTES, MAX_CALL_BYTES } from '../../../shared/limits';

/** The most bytes a request body of the route may hold, and the answer for one over it (compressed or not). */
export const bodyLimit = (batch: boolean): number => (batch ? MAX_BATCH_BYTES : MAX_CALL_BYTES);
export function bodyTooLarge(batch: boolean): string {
  return batch
    ? `batch is larger than ${MAX_BATCH_BYTES} bytes (${MAX_BATCH_BYTES / 1024} KB), the limit for a batch request`
    : `call is larger than ${MAX_CALL_BYTES} bytes (${MAX_CALL_BYTES / 1024} KB), the limit for a single call`;
}

/** The codings taken, for the Accept-Encoding header of a 415 (RFC 7694). */
export const ACCEPTED_ENCODINGS = 'gzip, deflate';

/** What a request body decodes to: the bytes as sent by the client before compression, or why not. */
export type Decoded = { ok: true; body: Buffer | undefined; encoding: string | null } | { ok: false; status: 400 | 415; message: string };

/** How each content coding is undone: `deflate` is zlib's format (RFC 9110), raw deflate taken too, as some clients send it. */
const DECODERS: Record<string, (b: Buffer, limit: number) => Buffer> = {
  gzip: (b, limit) => gunzipSync(b, { maxOutputLength: limit }),
  'x-gzip': (b, limit) => gunzipSync(b, { maxOutputLength: limit }),
  deflate: (b, limit) => {
    try {
      return inflateSync(b, { maxOutputLength: limit });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'Z_DATA_ERROR') throw err;
      return inflateRawSync(b, { maxOutputLength: limit });
    }
  },
};

/**
 * A compressed request body (`Content-Encoding: gzip`, as Segment's libraries send when asked, e.g.
 * analytics-python's `gzip=True`; `deflate` too), decoded before anything else reads it. The route's
 * limit applies to the decoded bytes, and zlib stops at it (maxOutputLength), so a small body that
 * inflates to gigabytes costs at most the limit. `identity` or no header: the body as it came. A list
 * (`gzip, gzip`: applied in that order) is undone from its last coding back; `identity` in it is no
 * coding. The over-limit answer is the route's own, as for an uncompressed body.
 */
export function decodeBody(body: Buffer | undefined, header: string | undefined, batch: boolean): Decoded {
  const codings = (header ?? '')
    .split(',')
    .map((c) => c.trim().toLowerCase())
    .filter((c) => c !== '' && c !== 'identity');
  if (codings.length === 0) return { ok: true, body, encoding: null };
  const unknown = codings.find((c) => !Object.hasOwn(DECODERS, c));
  if (unknown !== undefined) {
    return { ok: false, status: 415, message: `unsupported Content-Encoding "${printable(header ?? '')}": send the body as it is, or compressed with gzip or deflate` };
  }
  const encoding = codings.join(', ');
  if (!body || body.length === 0) return { ok: true, body, encoding };
  let decoded = body;
  for (const coding of [...codings].reverse()) {
    try {
      decoded = DECODERS[coding](decoded, bodyLimit(batch));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE' || err instanceof RangeError) return { ok: false, status: 400, message: `${bodyTooLarge(batch)} once decompressed (Content-Encoding: ${encoding})` };
      return { ok: false, status: 400, message: `body is not valid ${coding} data (Content-Encoding: ${encoding}): ${(err as Error).message}` };
    }
  }
  return { ok: true, body: decoded, encoding };
}

/** A body sent compressed without saying so (gzip's magic bytes): the JSON error says what to send. */
export function compressedHint(body: Buffer | undefined): string {
  return body && body.length >= 2 && body[0] === 0x1f && body[1] === 0x8b ? ' (the body looks gzip-compressed: send it with Content-Encoding: gzip)' : '';
}

/** A header value echoed in a message: control characters and anything past 64 characters left out. */
function printable(value: string): string {
  const clean = value.replace(/[^\x20-\x7e]/g, '?');
  return clean.length > 64 ? `${clean.slice(0, 64)}…` : clean;
}
