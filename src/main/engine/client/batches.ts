import { LIBRARY_NAME, LIBRARY_VERSION, MAX_BATCH_BYTES, MAX_BATCH_MESSAGES } from './constants';
import type { QueueEntry } from './queue-entry';

// The envelope is written by hand around the messages' JSON, which was serialized once at enqueue:
// a flush copies bytes, never re-serializes or re-encodes the queue.
const CONTEXT_JSON = JSON.stringify({ library: { name: LIBRARY_NAME, version: LIBRARY_VERSION } });
const HEAD = '{"batch":[';
const TAIL_START = `],"context":${CONTEXT_JSON},"messageId":`;

/** Envelope bytes around the messages for a UUID messageId and a 24-character ISO sentAt. */
export const ENVELOPE_BYTES = Buffer.byteLength(
  `${HEAD}${TAIL_START}${JSON.stringify('00000000-0000-4000-8000-000000000000')},"sentAt":"2000-01-01T00:00:00.000Z"}`,
);

export interface BatchLimits {
  maxMessages: number;
  maxBytes: number;
}

/** Split in order into requests of at most maxMessages messages and maxBytes bytes (envelope included). */
export function splitBatches(
  messages: readonly QueueEntry[],
  limits: BatchLimits = { maxMessages: MAX_BATCH_MESSAGES, maxBytes: MAX_BATCH_BYTES },
): QueueEntry[][] {
  const out: QueueEntry[][] = [];
  let current: QueueEntry[] = [];
  let bytes = ENVELOPE_BYTES;
  for (const m of messages) {
    const added = m.bytes + (current.length > 0 ? 1 : 0);
    if (current.length > 0 && (current.length >= limits.maxMessages || bytes + added > limits.maxBytes)) {
      out.push(current);
      current = [];
      bytes = ENVELOPE_BYTES;
      bytes += m.bytes;
    } else {
      bytes += added;
    }
    current.push(m);
  }
  if (current.length > 0) out.push(current);
  return out;
}

/** The request body of SPEC §5, `{batch, context: {library}, messageId, sentAt}`, as the UTF-8 bytes sent. */
export function buildBatchBody(messages: readonly QueueEntry[], batchId: string, sentAt: string): Buffer {
  const tail = `${TAIL_START}${JSON.stringify(batchId)},"sentAt":${JSON.stringify(sentAt)}}`;
  const tailBytes = Buffer.byteLength(tail, 'utf8');
  let size = HEAD.length + tailBytes + Math.max(0, messages.length - 1);
  for (const m of messages) size += m.bytes;
  const body = Buffer.allocUnsafe(size);
  let at = body.write(HEAD, 0, 'latin1');
  for (let i = 0; i < messages.length; i++) {
    if (i > 0) body[at++] = 0x2c; // ,
    const m = messages[i];
    at += m.chunk.copy(body, at, m.offset, m.offset + m.bytes);
  }
  body.write(tail, at, 'utf8');
  return body;
}
