import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

/**
 * No module of src/ imports itself back through others (issue 43): a circle hides which module a
 * rule belongs to and makes load order matter. Type-only imports count (a type circle is still a
 * circle for a reader). The one circle allowed is the renderer's zustand store: app.types.ts names
 * every slice's state and each slice is typed by the whole (zustand's slices pattern); it must stay
 * inside src/renderer/stores/. The graph is read with the TypeScript compiler's own import scanner
 * (ts.preProcessFile), relative imports resolved as the bundlers do.
 */
const ROOT = join(__dirname, '..', '..');
const SRC = join(ROOT, 'src');
const STORES = join(SRC, 'renderer', 'stores') + sep;
const STORE_HUB = join(STORES, 'app.types.ts');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = join(dir, e.name);
    if (e.isDirectory()) return sourceFiles(p);
    return /\.tsx?$/.test(e.name) && !e.name.endsWith('.d.ts') ? [p] : [];
  });
}

/** Each file's relative imports (values and types, re-exports and dynamic imports), resolved to files of `files`. */
function importGraph(files: string[], read: (f: string) => string): Map<string, string[]> {
  const known = new Set(files);
  const resolveSpec = (from: string, spec: string): string | null => {
    if (!spec.startsWith('.')) return null;
    const base = resolve(dirname(from), spec);
    for (const c of [base, `${base}.ts`, `${base}.tsx`, join(base, 'index.ts'), join(base, 'index.tsx'), base.replace(/\.js$/, '.ts')]) if (known.has(c)) return c;
    return null;
  };
  return new Map(
    files.map((f) => {
      const info = ts.preProcessFile(read(f), true, true);
      return [f, [...new Set(info.importedFiles.map((i) => resolveSpec(f, i.fileName)).filter((x): x is string => x !== null))]];
    }),
  );
}

/** The graph's circles: its strongly connected components of more than one file, or a file importing itself (Tarjan). */
function circles(graph: Map<string, string[]>): string[][] {
  let counter = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const out: string[][] = [];
  const visit = (v: string) => {
    index.set(v, counter);
    low.set(v, counter++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const component: string[] = [];
    let w: string;
    do {
      w = stack.pop()!;
      onStack.delete(w);
      component.push(w);
    } while (w !== v);
    if (component.length > 1 || (graph.get(v) ?? []).includes(v)) out.push(component.sort());
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return out;
}

const allowed = (c: string[]) => c.includes(STORE_HUB) && c.every((f) => f.startsWith(STORES));
const name = (f: string) => relative(SRC, f).split(sep).join('/');

describe('import circles', () => {
  it("none in src/ but the renderer's zustand slices", () => {
    const files = sourceFiles(SRC);
    const found = circles(importGraph(files, (f) => readFileSync(f, 'utf8'))).filter((c) => !allowed(c));
    expect(found.map((c) => c.map(name).join(' → '))).toEqual([]);
  });

  it('sees a circle when there is one: a type-only one, and one through three files', () => {
    const files = ['/x/a.ts', '/x/b.ts', '/x/c.ts', '/x/d.ts', '/x/e.ts'];
    const text: Record<string, string> = {
      '/x/a.ts': "import type { B } from './b';",
      '/x/b.ts': "export type { A } from './a';",
      '/x/c.ts': "import { d } from './d.js';",
      '/x/d.ts': "const e = () => import('./e');",
      '/x/e.ts': "import './c';",
    };
    expect(circles(importGraph(files, (f) => text[f]!))).toEqual([
      ['/x/a.ts', '/x/b.ts'],
      ['/x/c.ts', '/x/d.ts', '/x/e.ts'],
    ]);
  });
});
