import { describe, expect, it, vi } from 'vitest';
import { Analytics, ManualClock, MAX_MESSAGE_BYTES, MemoryPersistence, MessageTooLargeError, PersistenceError, QueueFullError, type Transport } from '../../src/main/engine/client';
import { ARENA_CHUNK_BYTES, ByteArena } from '../../src/main/engine/client/byte-arena';

// The queue keeps each message as UTF-8 bytes written at the call (byte-arena.ts). These tests read
// what actually goes on the wire, so a change of representation cannot pass by reading its own copy.

interface Sent {
  body: Buffer;
  batch: Record<string, unknown>[];
}

function recording(): { transport: Transport; sent: Sent[] } {
  const sent: Sent[] = [];
  const transport: Transport = {
    async send(req) {
      const body = Buffer.from(req.body);
      sent.push({ body, batch: JSON.parse(body.toString('utf8')).batch });
      return { status: 200, body: '{"success":true}' };
    },
  };
  return { transport, sent };
}

function client(transport: Transport) {
  return new Analytics('wk_test', { transport, clock: new ManualClock(Date.UTC(2026, 0, 2, 3, 4, 5, 6)), flushAt: 100_000, maxQueueSize: 100_000 });
}

describe('what is queued is the message as it was at the call', () => {
  it('later changes to the caller’s object, nested or not, change nothing that is sent', async () => {
    const { transport, sent } = recording();
    const analytics = client(transport);
    const products = [{ sku: 'a', quantity: 1 }];
    const message = { userId: 'u1', event: 'Order Completed', properties: { total: 10, products }, context: { ip: '203.0.113.7' } };
    analytics.track(message);
    message.event = 'Changed';
    message.properties.total = 99;
    products[0].quantity = 7;
    products.push({ sku: 'b', quantity: 2 });
    message.context.ip = '198.51.100.1';
    await analytics.close();
    expect(sent[0].batch[0]).toMatchObject({
      event: 'Order Completed',
      properties: { total: 10, products: [{ sku: 'a', quantity: 1 }] },
      context: { ip: '203.0.113.7' },
    });
  });

  it('one object reused in a loop sends each state it had', async () => {
    const { transport, sent } = recording();
    const analytics = client(transport);
    const message = { userId: 'u1', event: '', properties: { i: 0 } };
    for (let i = 0; i < 50; i++) {
      message.event = `E${i}`;
      message.properties.i = i;
      analytics.track(message);
    }
    await analytics.close();
    const batch = sent.flatMap((s) => s.batch);
    expect(batch.map((m) => m.event)).toEqual(Array.from({ length: 50 }, (_, i) => `E${i}`));
    expect(batch.map((m) => (m.properties as { i: number }).i)).toEqual(Array.from({ length: 50 }, (_, i) => i));
  });
});

describe('the bytes on the wire', () => {
  it('carries every message intact across many arena chunks, multi-byte text included, with the ids track() returned', async () => {
    const { transport, sent } = recording();
    const analytics = client(transport);
    const texts = ['plain ascii', 'café crème', '€ 42', 'emoji 😀 pair', '中文字符', 'quote " and \\ backslash', 'line\nbreak'];
    const expected: { messageId: string; text: string; i: number }[] = [];
    // About 3 chunks' worth, so messages are copied out of several buffers into one body.
    const pad = 'p'.repeat(500);
    const count = Math.ceil((3 * ARENA_CHUNK_BYTES) / 600);
    for (let i = 0; i < count; i++) {
      const text = texts[i % texts.length];
      const messageId = i % 5 === 0 ? analytics.identify({ userId: `u${i}`, traits: { text, i, pad } }) : analytics.track({ userId: `u${i}`, event: text, properties: { text, i, pad } });
      expected.push({ messageId, text, i });
    }
    const result = await analytics.close();
    expect(result.sent).toBe(count);
    const batch = sent.flatMap((s) => s.batch);
    expect(batch).toHaveLength(count);
    batch.forEach((m, i) => {
      const fields = (m.type === 'identify' ? m.traits : m.properties) as { text: string; i: number };
      expect(m.messageId).toBe(expected[i].messageId);
      expect(fields).toEqual({ text: expected[i].text, i: expected[i].i, pad });
      expect(m.timestamp).toBe('2026-01-02T03:04:05.006Z');
      expect(m.userId).toBe(`u${i}`);
    });
    for (const s of sent) expect(result.batches.map((b) => b.bytes)).toContain(s.body.length);
    expect(new Set(batch.map((m) => m.messageId)).size).toBe(count);
  });

  it('a message refused after it was copied (over 32 KB in bytes, not in characters) leaves nothing in the queue', async () => {
    const { transport, sent } = recording();
    const analytics = client(transport);
    const before = analytics.track({ userId: 'u1', event: 'Before' });
    // 11,000 three-byte characters: under the limit in characters, over it in bytes.
    expect(() => analytics.track({ userId: 'u1', event: 'Big', properties: { s: '€'.repeat(11_000) } })).toThrow(MessageTooLargeError);
    const after = analytics.track({ userId: 'u1', event: 'After', properties: { s: 'é' } });
    const { queued, queuedBytes } = analytics.stats();
    await analytics.close();
    expect(sent).toHaveLength(1);
    expect(queued).toBe(2);
    // Re-serializing a parsed message gives its bytes back exactly: the refused one counted for nothing.
    expect(queuedBytes).toBe(sent[0].batch.reduce((sum, m) => sum + Buffer.byteLength(JSON.stringify(m)), 0));
    expect(sent[0].batch.map((m) => [m.event, m.messageId])).toEqual([
      ['Before', before],
      ['After', after],
    ]);
    expect(sent[0].batch[1].properties).toEqual({ s: 'é' });
  });

  it('accepts a message of exactly 32 KB whose bytes are multi-byte, and refuses one byte more', async () => {
    const { transport, sent } = recording();
    const analytics = client(transport);
    const sized = (euros: number, xs: number) => ({ userId: 'u1', event: 'E', properties: { s: '€'.repeat(euros) + 'x'.repeat(xs) } });
    analytics.track(sized(0, 0));
    await analytics.flush();
    const base = Buffer.byteLength(JSON.stringify(sent[0].batch[0]));
    const room = MAX_MESSAGE_BYTES - base;
    const euros = Math.floor(room / 3);
    analytics.track(sized(euros, room - euros * 3));
    expect(() => analytics.track(sized(euros, room - euros * 3 + 1))).toThrow(expect.objectContaining({ bytes: MAX_MESSAGE_BYTES + 1 }));
    const result = await analytics.close();
    expect(result.sent).toBe(1);
    expect(Buffer.byteLength(JSON.stringify(sent[1].batch[0]))).toBe(MAX_MESSAGE_BYTES);
  });
});

describe('a call refused after it was written gives its bytes back', () => {
  // Otherwise, with a full queue (a dead endpoint), each refused call spends arena space, each accepted
  // one lands in a fresh chunk, and a queue of 1000 small messages (128 KB) held 92 MB of chunks.
  it('refused for a full queue or by persistence, calls open no chunk; the queue keeps the calls it accepted', async () => {
    const { transport, sent } = recording();
    const persistence = new MemoryPersistence();
    const analytics = new Analytics('wk_test', { transport, clock: new ManualClock(), flushAt: 100, maxQueueSize: 1, persistence });
    const kept = analytics.track({ userId: 'u1', event: 'Kept' });
    const big = { userId: 'u1', event: 'E', properties: { s: 'x'.repeat(1000) } };
    const allocs = vi.spyOn(Buffer, 'allocUnsafeSlow');
    try {
      for (let i = 0; i < 1000; i++) expect(() => analytics.track(big)).toThrow(QueueFullError);
      await analytics.flush();
      persistence.add = () => {
        throw new Error('disk full');
      };
      for (let i = 0; i < 1000; i++) expect(() => analytics.track(big)).toThrow(PersistenceError);
      expect(allocs).not.toHaveBeenCalled();
    } finally {
      allocs.mockRestore();
    }
    expect(sent.map((s) => s.batch.map((m) => m.messageId))).toEqual([[kept]]);
  });
});

describe('ByteArena', () => {
  it('hands out space in one chunk until it is short, then opens a new one', () => {
    const arena = new ByteArena(100);
    const a = arena.reserve(60);
    const first = arena.chunk;
    arena.commit(40);
    expect(arena.reserve(60)).toBe(40);
    expect(arena.chunk).toBe(first);
    arena.commit(50);
    expect(arena.reserve(20)).toBe(0);
    expect(arena.chunk).not.toBe(first);
    expect(a).toBe(0);
  });

  it('reuses space that was reserved but not committed', () => {
    const arena = new ByteArena(100);
    arena.reserve(80);
    const chunk = arena.chunk;
    expect(arena.reserve(80)).toBe(0);
    expect(arena.chunk).toBe(chunk);
  });

  it('gives a reservation larger than a chunk a buffer of its own', () => {
    const arena = new ByteArena(100);
    arena.reserve(10);
    arena.commit(10);
    expect(arena.reserve(500)).toBe(0);
    expect(arena.chunk.length).toBe(500);
  });

  it('release() gives back the last commit only', () => {
    const arena = new ByteArena(100);
    const a = arena.append('{"a":1}');
    const b = arena.append('{"b":2}');
    arena.release(a.chunk, a.offset, a.bytes);
    expect(arena.reserve(1)).toBe(14);
    arena.release(b.chunk, b.offset, b.bytes);
    expect(arena.reserve(1)).toBe(7);
  });

  it('appends whole texts as UTF-8 and reports where they are', () => {
    const arena = new ByteArena(64);
    const one = arena.append('{"a":"é"}');
    const two = arena.append('{"b":1}');
    expect(one.chunk.toString('utf8', one.offset, one.offset + one.bytes)).toBe('{"a":"é"}');
    expect(one.bytes).toBe(10);
    expect(two.offset).toBe(10);
    expect(two.chunk.toString('utf8', two.offset, two.offset + two.bytes)).toBe('{"b":1}');
  });
});
