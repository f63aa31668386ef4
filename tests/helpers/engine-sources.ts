import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';

/** The engine's source folder. */
export const ENGINE_DIR = join(__dirname, '..', '..', 'src', 'main', 'engine');

/** Every TypeScript file of the engine, by its path under src/main/engine, with its text: for tests that hold a rule over all of them. */
export function engineSources(): { file: string; text: string }[] {
  const out: { file: string; text: string }[] = [];
  const walk = (dir: string) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (p.endsWith('.ts')) out.push({ file: relative(ENGINE_DIR, p), text: readFileSync(p, 'utf8') });
    }
  };
  walk(ENGINE_DIR);
  return out;
}
