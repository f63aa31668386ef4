import { afterEach, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Store } from '../../src/main/engine/store/store';

// Sources are looked up by name through an index kept beside the id and write key ones (a scan per
// lookup made a config import of n sources quadratic: 10,000 took 88 s, issue 38). The index must
// follow every change: a rename, a delete, a transaction rolled back, a restart.

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

it('byName follows create, rename, delete, a rolled-back change and a restart', () => {
  const dir = mkdtempSync(join(tmpdir(), 'wl-by-name-'));
  dirs.push(dir);
  let store = new Store({ dataDir: dir });
  try {
    const a = store.sources.create({ name: 'alpha' }, 1);
    const b = store.sources.create({ name: 'beta' }, 1);
    expect(store.sources.byName('alpha')?.id).toBe(a.id);
    store.sources.update(a.id, { name: 'gamma' }, 2);
    expect(store.sources.byName('alpha')).toBeUndefined();
    expect(store.sources.byName('gamma')?.id).toBe(a.id);
    // The old name is free again, and the new one taken.
    expect(() => store.sources.create({ name: 'gamma' }, 3)).toThrow(/already exists/);
    const again = store.sources.create({ name: 'alpha' }, 3);
    expect(store.sources.byName('alpha')?.id).toBe(again.id);
    store.sources.delete(b.id);
    expect(store.sources.byName('beta')).toBeUndefined();
    const before = store.sources.list();
    store.sources.restore(before.filter((s) => s.id !== again.id));
    expect(store.sources.byName('alpha')).toBeUndefined();
    store.sources.restore(before);
    expect(store.sources.byName('alpha')?.id).toBe(again.id);
  } finally {
    store.close();
  }
  store = new Store({ dataDir: dir });
  try {
    expect(store.sources.list().map((s) => s.name).sort()).toEqual(['alpha', 'gamma']);
    expect(store.sources.byName('gamma')?.name).toBe('gamma');
    expect(store.sources.byName('beta')).toBeUndefined();
  } finally {
    store.close();
  }
});
