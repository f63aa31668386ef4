import { existsSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';

// Where a worker thread's code is (the tracking plans' check worker, the control API's body reader).
// A worker runs a file of its own, and the rules it applies are the engine's: it gets them from a
// build step, never a copy. Built, it is out/main/<name>.js, an entry of electron.vite.config.ts
// beside the engine's. Run from source (Vitest), there is no such file: its source is bundled once
// per process with rolldown (Vite's bundler, a devDependency) into node_modules/.cache, where its
// packages resolve.

const fromSource = new Map<string, Promise<string>>();

/** `name`: the build's entry (plan-check-worker); `source`: its .ts file, bundled when run from source; `what`: for the error. */
export function workerFile(name: string, source: string, what: string): Promise<string> {
  // The engine's code sits in out/main/ or in out/main/chunks/ of the build.
  for (const dir of [__dirname, join(__dirname, '..')]) {
    const built = join(dir, `${name}.js`);
    if (existsSync(built)) return Promise.resolve(built);
  }
  if (!existsSync(source)) return Promise.reject(new Error(`${what} (${name}.js) is missing beside the engine in ${__dirname}: build the app again`));
  let bundled = fromSource.get(name);
  if (!bundled) fromSource.set(name, (bundled = bundle(name, source)));
  return bundled;
}

async function bundle(name: string, source: string): Promise<string> {
  let root = dirname(source);
  while (!existsSync(join(root, 'node_modules', 'rolldown')) && dirname(root) !== root) root = dirname(root);
  const dir = join(root, 'node_modules', '.cache', 'webhook-lab');
  mkdirSync(dir, { recursive: true });
  // Bundles of processes that ended without their exit handler (a test runner kills its workers).
  for (const f of readdirSync(dir)) {
    const pid = /^[a-z-]+-worker-(\d+)-\d+\.cjs$/.exec(f)?.[1];
    if (pid && !alive(Number(pid))) rmSync(join(dir, f), { force: true });
  }
  const file = join(dir, `${name}-${process.pid}-${Date.now()}.cjs`);
  const { build } = (await importPackage('rolldown')) as { build: (options: Record<string, unknown>) => Promise<unknown> };
  await build({
    input: source,
    platform: 'node',
    logLevel: 'silent',
    // Packages stay require()s, resolved from node_modules as the engine's own are.
    external: (id: string) => !id.startsWith('.') && !id.startsWith('/') && !/^[A-Za-z]:[\\/]/.test(id),
    output: { file, format: 'cjs' },
  });
  process.once('exit', () => rmSync(file, { force: true }));
  return file;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: it exists, owned by someone else.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** A package named by a parameter, out of the bundler's sight: the app's own build does not take its bundler in. */
function importPackage(name: string): Promise<unknown> {
  return import(name);
}
