import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer, type AddressInfo, type Server } from 'node:net';
import type { Store } from '../../src/main/engine/store/store';
import type { TrackingPlans } from '../../src/main/engine/tracking-plans/service';
import { startEngine } from '../../src/main/engine/engine';
import type { Engine, EngineOptions } from '../../src/main/engine/engine.types';
import { api, type OpInput, type OpName, type OpOutput, type EngineEvent } from '../../src/shared/api.contract';
import { configSchema, type Config } from '../../src/shared/config.schema';
import type { SettingsPatch } from '../../src/shared/settings.schema';
import { parseOrThrow } from '../../src/shared/validation-error';

export interface TestEngine {
  engine: Engine;
  dataDir: string;
  collectorUrl: string;
  /** Calls an operation the way the adapters do: input parsed by the op's schema first. */
  call<K extends OpName>(name: K, input: OpInput<K>): Promise<OpOutput<K>>;
  events: EngineEvent[];
  /** POST JSON (or raw text) to a collector route, Basic auth with writeKey when given. */
  post(path: string, body: unknown, opts?: { writeKey?: string; headers?: Record<string, string> }): Promise<{ status: number; json: { success: boolean; message?: string } }>;
  stop(opts?: { keepData?: boolean }): Promise<void>;
}

/** Ports free now (each bound to port 0 and let go). */
async function freePorts(n: number): Promise<number[]> {
  const servers = await Promise.all(
    Array.from({ length: n }, () => new Promise<Server>((resolve, reject) => {
      const s = createServer();
      s.once('error', reject);
      s.listen(0, '127.0.0.1', () => resolve(s));
    })),
  );
  const ports = servers.map((s) => (s.address() as AddressInfo).port);
  await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
  return ports;
}

export async function startTestEngine(
  /** rememberedReceiverPorts: the mock receivers take the ports kept in the data folder (two free ones at first), as `serve` does; else free ones each start. */
  o: { config?: unknown; overrides?: SettingsPatch; dataDir?: string; rememberedReceiverPorts?: boolean } & Pick<EngineOptions, 'lanes' | 'onStore' | 'log'> = {},
): Promise<TestEngine> {
  const dataDir = o.dataDir ?? mkdtempSync(join(tmpdir(), 'wl-test-'));
  const config: Config | undefined = o.config ? configSchema.parse(o.config) : undefined;
  // Remembered ports start as two free ones, not the defaults 8789/8790: another test, or another
  // lab on the machine, may hold those (two suites side by side collided there).
  const firstPorts = o.rememberedReceiverPorts ? await freePorts(2) : undefined;
  const onStore = (store: Store, plans: TrackingPlans) => {
    if (firstPorts && store.settings.getExtra('mockReceiverPorts') === undefined) store.settings.setExtra('mockReceiverPorts', { http: firstPorts[0], https: firstPorts[1] });
    o.onStore?.(store, plans);
  };
  const engine = await startEngine({
    dataDir, collectorPort: 0, config, overrides: o.overrides, mockReceiverPorts: o.rememberedReceiverPorts ? undefined : { http: 0, https: 0 }, lanes: o.lanes, onStore, log: o.log,
  });
  const events: EngineEvent[] = [];
  engine.onEvents((batch) => events.push(...batch));
  return {
    engine,
    dataDir,
    collectorUrl: engine.collectorUrl,
    events,
    call: async (name, input) => {
      const parsed = parseOrThrow(api[name].input, input);
      return (engine.handlers[name] as (i: unknown) => unknown)(parsed) as never;
    },
    post: async (path, body, opts = {}) => {
      const headers: Record<string, string> = { 'content-type': 'application/json', ...opts.headers };
      if (opts.writeKey !== undefined) headers.authorization = `Basic ${Buffer.from(`${opts.writeKey}:`).toString('base64')}`;
      const res = await fetch(engine.collectorUrl + path, { method: 'POST', headers, body: typeof body === 'string' ? body : JSON.stringify(body) });
      return { status: res.status, json: (await res.json()) as { success: boolean; message?: string } };
    },
    stop: async ({ keepData = false } = {}) => {
      await engine.stop();
      if (!keepData && !o.dataDir) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** Polls until fn returns a truthy value (real time), failing with `what` after timeoutMs. */
export async function waitFor<T>(fn: () => T | Promise<T>, what: string, timeoutMs = 10_000): Promise<NonNullable<T>> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v as NonNullable<T>;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/**
 * For work that grows with the machine's slowness (a thousand rounds, a long import): waits for `fn`
 * as long as `progress()` keeps changing, and fails only after `stallMs` without any change. The
 * deadline follows what the machine does, not a constant tuned on a fast one (issue 44).
 */
export async function waitWhileProgressing<T>(fn: () => T | Promise<T>, progress: () => unknown, what: string, stallMs = 30_000): Promise<NonNullable<T>> {
  let last = progress();
  let lastChange = Date.now();
  for (;;) {
    const v = await fn();
    if (v) return v as NonNullable<T>;
    const now = progress();
    if (now !== last) {
      last = now;
      lastChange = Date.now();
    } else if (Date.now() - lastChange > stallMs) {
      throw new Error(`timed out waiting for ${what}: no progress for ${stallMs} ms (at ${String(now)})`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}

export function webhookSource(name: string, writeKey: string, urls: string[], secret?: string) {
  return { name, writeKey, webhooks: { enabled: true, sharedSecret: secret, urls: urls.map((url) => ({ url, headers: {} })) } };
}
