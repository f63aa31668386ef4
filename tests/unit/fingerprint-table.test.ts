import { describe, expect, it } from 'vitest';
import { mulberry32, randomSeed } from '../../src/main/engine/seeded-random';
import { fingerprint, FingerprintTable, type Fingerprint } from '../../src/main/engine/store/fingerprint-table';

describe('FingerprintTable', () => {
  it('agrees with a Map through random sets, replaces and deletes, with long probe runs that wrap around', () => {
    const seed = Number(process.env.FP_SEED ?? randomSeed());
    console.log(`fingerprint table: seed ${seed} (FP_SEED=${seed} to repeat)`);
    const rand = mulberry32(seed);
    const capacity = 40;
    const table = new FingerprintTable(capacity); // 128 slots
    const model = new Map<string, number>();
    // Few home slots, several near the end of the array: runs collide, overlap and wrap.
    const homes = [0, 1, 2, 125, 126, 127];
    const fps: Fingerprint[] = [];
    for (let i = 0; i < 120; i++) fps.push({ hi: homes[i % homes.length]! + 128 * Math.floor(rand() * 1000), lo: ((i + 1) << 1) | 1 });
    const key = (fp: Fingerprint) => `${fp.hi}:${fp.lo}`;
    for (let step = 0; step < 20_000; step++) {
      const fp = fps[Math.floor(rand() * fps.length)]!;
      const r = rand();
      if (r < 0.5) {
        const at = step;
        const fits = model.has(key(fp)) || model.size < capacity;
        expect(table.set(fp, at), `step ${step}, seed ${seed}`).toBe(fits);
        if (fits) model.set(key(fp), at);
      } else if (r < 0.8) {
        expect(table.delete(fp), `step ${step}, seed ${seed}`).toBe(model.delete(key(fp)));
      }
      expect(table.count).toBe(model.size);
      if (step % 97 === 0) for (const f of fps) expect(table.get(f), `step ${step}, seed ${seed}`).toBe(model.get(key(f)));
    }
    table.clear();
    expect(table.count).toBe(0);
    for (const f of fps) expect(table.get(f)).toBeUndefined();
  });

  it('fingerprints differ by source and by id, and are never empty', () => {
    const a: Fingerprint = { hi: 0, lo: 0 };
    const b: Fingerprint = { hi: 0, lo: 0 };
    const s1 = 1;
    const s2 = 2;
    fingerprint(s1, 'm-1', a);
    fingerprint(s2, 'm-1', b);
    expect([a.hi, a.lo]).not.toEqual([b.hi, b.lo]);
    fingerprint(s1, 'm-2', b);
    expect([a.hi, a.lo]).not.toEqual([b.hi, b.lo]);
    fingerprint(s1, 'm-1', b);
    expect([a.hi, a.lo]).toEqual([b.hi, b.lo]);
    // Ids that differ in one code unit, in length only, or are empty: all distinct, none with lo 0.
    const seen = new Set<string>();
    const ids = ['', 'a', 'aa', 'ab', 'ba', '\u0000', '\u0000\u0000', 'é', '😀', ...Array.from({ length: 100_000 }, (_, i) => `id-${i}`)];
    for (const id of ids) {
      fingerprint(s1, id, a);
      expect(a.lo).not.toBe(0);
      seen.add(`${a.hi}:${a.lo}`);
    }
    expect(seen.size).toBe(ids.length);
    // The same id under 10,000 sources: 10,000 fingerprints (source numbers never share a seed).
    const bySource = new Set<string>();
    for (let n = 1; n <= 10_000; n++) {
      fingerprint(n, 'same-id', a);
      bySource.add(`${a.hi}:${a.lo}`);
    }
    expect(bySource.size).toBe(10_000);
  });

  it("is the fingerprint of the id as SQLite stores it: a lone surrogate counts as U+FFFD, a pair as itself", () => {
    // The stored messageId (UTF-8) has U+FFFD for a lone surrogate, and the window is rebuilt from it at
    // start: fingerprinted as received, "a\ud800" was a new id after a restart and "a\ufffd" a new one before.
    const a: Fingerprint = { hi: 0, lo: 0 };
    const b: Fingerprint = { hi: 0, lo: 0 };
    const seed = Number(process.env.FP_SEED ?? randomSeed());
    console.log(`fingerprint surrogates: seed ${seed} (FP_SEED=${seed} to repeat)`);
    const rand = mulberry32(seed);
    const units = [0x61, 0xd800, 0xdbff, 0xdc00, 0xdfff, 0xfffd, 0xd83d, 0xde00];
    for (let i = 0; i < 5_000; i++) {
      const id = String.fromCharCode(...Array.from({ length: 1 + Math.floor(rand() * 6) }, () => units[Math.floor(rand() * units.length)]!));
      const stored = Buffer.from(id, 'utf8').toString('utf8');
      fingerprint(1, id, a);
      fingerprint(1, stored, b);
      expect([a.hi, a.lo], `${JSON.stringify(id)}, seed ${seed}`).toEqual([b.hi, b.lo]);
    }
    fingerprint(1, '\ud83d\ude00', a); // a valid pair (😀) is not U+FFFD twice
    fingerprint(1, '\ufffd\ufffd', b);
    expect([a.hi, a.lo]).not.toEqual([b.hi, b.lo]);
  });
});
