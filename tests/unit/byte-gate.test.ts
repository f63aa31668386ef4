import { describe, expect, it } from 'vitest';
import { ByteGate } from '../../src/main/engine/collector/byte-gate';

describe('ByteGate', () => {
  it('admits up to the limit at once, then in arrival order as bytes are released', async () => {
    const gate = new ByteGate(100);
    const order: string[] = [];
    expect(gate.acquire(60)).toBeUndefined();
    expect(gate.acquire(40)).toBeUndefined();
    const a = gate.acquire(50)!.then(() => order.push('a'));
    const b = gate.acquire(10)!.then(() => order.push('b'));
    expect(gate.pending).toBe(2);
    gate.release(40);
    await Promise.resolve();
    // 60 + 50 > 100: a still waits, and b may not overtake it.
    expect(order).toEqual([]);
    gate.release(60);
    await Promise.all([a, b]);
    expect(order).toEqual(['a', 'b']);
    expect(gate.pending).toBe(0);
  });

  it('always admits one request, however large', async () => {
    const gate = new ByteGate(100);
    expect(gate.acquire(500)).toBeUndefined();
    let admitted = false;
    const next = gate.acquire(300)!.then(() => (admitted = true));
    await Promise.resolve();
    expect(admitted).toBe(false);
    gate.release(500);
    await next;
    expect(admitted).toBe(true);
    gate.release(300);
    expect(gate.acquire(1)).toBeUndefined();
  });
});
