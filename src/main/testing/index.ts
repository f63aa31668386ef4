// Public entry of `webhook-lab/testing` (docs/testing.md): a lab for automated tests, started in the
// test's own process (startLab) or a running one connected to (connectLab), with one handle to
// assert on what it received. Built as the package export next to `webhook-lab/client`.
import { randomBytes } from 'node:crypto';
import { copyFileSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { configSchema } from '../../shared/config.schema';
import { settingsPatchSchema } from '../../shared/settings.schema';
import { fieldErrors, describeErrors } from '../../shared/validation-error';
import { startEngine } from '../engine/engine';
import { CERT_FILE, KEY_FILE } from '../engine/simulation/mock-receivers';
import type { Engine } from '../engine/engine.types';
import { startControlServer } from '../server/control-server';
import { createHandle } from './handle';
import { apiRoot, httpApi, inProcessApi } from './transport';
import type { ConnectLabOptions, Lab, StartLabOptions } from './types';

export { LabTimeoutError } from './handle';
export { LabApiError } from './transport';
export type { CallsOptions, ConnectLabOptions, Lab, LabCall, LabDelivery, LabViolation, Match, MatchValue, StartLabOptions, WaitOptions } from './types';

const optionsSchema = z.strictObject({
  sources: configSchema.shape.sources.optional(),
  receivers: configSchema.shape.mockReceivers.optional(),
  trackingPlans: configSchema.shape.trackingPlans.optional(),
  settings: settingsPatchSchema.optional(),
  timeScale: settingsPatchSchema.shape.timeScale,
  strict: settingsPatchSchema.shape.strict,
  ui: z.boolean().optional(),
  collectorPort: z.number().int().min(0).max(65535).optional(),
  log: z.custom<(line: string) => void>((v) => typeof v === 'function', { message: 'expected a function (line: string) => void' }).optional(),
});

/** Polls of a lab in this process cost a query of its SQLite file; of one over HTTP, a request. */
const POLL_IN_PROCESS_MS = 20;
/** A source's Webhooks URLs at most (SPEC: up to five). */
const MAX_WEBHOOK_URLS = 5;
const POLL_HTTP_MS = 50;

/**
 * The HTTPS mock receivers' certificate of the first lab this process started, kept (in a folder of
 * its own, removed when the last running lab stops, or at exit) and put into the next labs' folders,
 * where the engine reuses a stored certificate: generating its RSA key is most of a lab's start (100
 * to 300 ms, as the primes fall). Test runners' workers end without an 'exit' event, so stop() is
 * what removes it there.
 */
let certificateDir: string | undefined;
/** Labs started and not yet stopped. */
let running = 0;
/** One 'exit' hook for the process, whatever folder is kept then: one per kept folder piled up (a suite's 11th lab warned of a listener leak). */
let exitHooked = false;

function forgetCertificate(): void {
  if (running > 0 || !certificateDir) return;
  rmSync(certificateDir, { recursive: true, force: true });
  certificateDir = undefined;
}

function keepCertificate(dataDir: string): void {
  if (certificateDir || !existsSync(join(dataDir, CERT_FILE)) || !existsSync(join(dataDir, KEY_FILE))) return;
  const dir = mkdtempSync(join(tmpdir(), 'webhook-lab-testing-cert-'));
  for (const f of [CERT_FILE, KEY_FILE]) copyFileSync(join(dataDir, f), join(dir, f));
  certificateDir = dir;
  if (exitHooked) return;
  exitHooked = true;
  process.once('exit', () => certificateDir && rmSync(certificateDir, { recursive: true, force: true }));
}

function reuseCertificate(dataDir: string): void {
  if (!certificateDir) return;
  for (const f of [CERT_FILE, KEY_FILE]) copyFileSync(join(certificateDir, f), join(dataDir, f));
}

/**
 * Starts a lab in this process — collector, store in a temporary folder, dispatcher, mock receivers —
 * on free loopback ports, with one source ("Test" unless `sources` are given), and resolves to its
 * handle. `stop()` closes every port and removes the folder. Options are the config file's shapes.
 */
export async function startLab(options: StartLabOptions = {}): Promise<Lab> {
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throw new TypeError(`startLab: options: expected an object ({ sources, receivers, … }) or nothing, got ${options === null ? 'null' : Array.isArray(options) ? 'an array' : typeof options}`);
  }
  const checked = optionsSchema.safeParse(options ?? {});
  if (!checked.success) throw new TypeError(`startLab: ${describeErrors(fieldErrors(checked.error))}`);
  const o = checked.data;
  const sourcesGiven = o.sources && o.sources.length > 0;
  const config = configSchema.parse({
    sources: sourcesGiven ? options.sources : [{ name: 'Test' }],
    mockReceivers: options.receivers ?? [],
    trackingPlans: options.trackingPlans ?? [],
  });
  const overrides = { ...o.settings, ...(o.timeScale === undefined ? {} : { timeScale: o.timeScale }), ...(o.strict === undefined ? {} : { strict: o.strict }) };
  const dataDir = mkdtempSync(join(tmpdir(), 'webhook-lab-testing-'));
  reuseCertificate(dataDir);
  let engine: Engine | undefined;
  let server: Awaited<ReturnType<typeof startControlServer>> | undefined;
  running++;
  const close = async () => {
    try {
      await server?.app.close();
      await engine?.stop();
      rmSync(dataDir, { recursive: true, force: true });
    } finally {
      running--;
      forgetCertificate();
    }
  };
  try {
    engine = await startEngine({
      dataDir,
      ownedDataDir: true,
      collectorHost: '127.0.0.1',
      collectorPort: o.collectorPort ?? 0,
      mockReceiverPorts: { http: 0, https: 0 },
      config,
      overrides,
      log: o.log,
    });
    keepCertificate(dataDir);
    const api = inProcessApi(engine.handlers);
    const stored = await api('listSources', {});
    const sources = stored.map((s) => ({ id: s.id, name: s.name, writeKey: s.writeKey }));
    // In the order given (the store lists by name or creation; the first given is the handle's).
    const order = config.sources.map((s) => s.name);
    sources.sort((a, b) => order.indexOf(a.name) - order.indexOf(b.name));
    const first = sources[0];
    // A receiver's URL has a free port chosen now: attach each to the first source, unless a source
    // already sends to it (a config naming the receiver).
    const sentTo = new Set(stored.flatMap((s) => s.webhooks.urls.map((u) => u.url)));
    const firstStored = stored.find((s) => s.id === first.id)!;
    const where = (name: string) => `receivers[${(options.receivers ?? []).findIndex((r) => r.name === name)}]`;
    const toAttach = (await api('listReceivers', {})).filter((r) => !sentTo.has(r.url));
    toAttach.forEach((r, i) => {
      if (firstStored.webhooks.urls.length + i + 1 > MAX_WEBHOOK_URLS) {
        throw new TypeError(
          `startLab: ${where(r.name)}: the first source (${JSON.stringify(first.name)}) sends to at most ${MAX_WEBHOOK_URLS} URLs, and every receiver no source names is attached to it: send another source's calls to this one (its webhooks.urls: [{ mockReceiver: ${JSON.stringify(r.name)} }])`,
        );
      }
    });
    for (const r of toAttach) await api('attachReceiver', { id: r.id, sourceId: first.id });
    let apiUrl: string | null = null;
    let token: string | null = null;
    let uiUrl: string | null = null;
    if (o.ui) {
      token = randomBytes(18).toString('base64url');
      // out/main/testing.js beside out/renderer; from the sources (tests) the API alone is served.
      server = await startControlServer({ engine, host: '127.0.0.1', port: 0, token, staticDir: join(__dirname, '../renderer') });
      apiUrl = `${server.url}/api`;
      uiUrl = `${server.url}/?token=${encodeURIComponent(token)}`;
    }
    return createHandle({ api, collectorUrl: engine.collectorUrl, writeKey: first.writeKey, sources, apiUrl, token, uiUrl, pollMs: POLL_IN_PROCESS_MS, close });
  } catch (err) {
    await close().catch(() => undefined);
    const fields = (err as { fields?: { path: string; message: string }[] }).fields;
    if (fields?.length) throw new TypeError(`startLab: ${fields.map((f) => `${f.path.replace(/^mockReceivers/, 'receivers')}: ${f.message}`).join('; ')}`);
    throw err;
  }
}

/** The web UI with its token when the lab serves one at its root (serve does; a control API alone does not), else null. */
async function uiOf(root: string, token: string): Promise<string | null> {
  try {
    const res = await fetch(`${root}/`, { signal: AbortSignal.timeout(2_000) });
    const html = res.ok && (res.headers.get('content-type') ?? '').startsWith('text/html');
    await res.arrayBuffer();
    return html ? `${root}/?token=${encodeURIComponent(token)}` : null;
  } catch {
    return null;
  }
}

/**
 * The same handle for a lab already running (`webhook-lab serve` in CI, the desktop app), over its
 * control API. `stop()` only ends the handle's waits: the lab keeps running.
 */
export async function connectLab(options: ConnectLabOptions): Promise<Lab> {
  if (typeof options !== 'object' || options === null) throw new TypeError('connectLab: give { apiUrl, token }');
  const root = apiRoot(options.apiUrl);
  if (typeof options.token !== 'string' || options.token === '') throw new TypeError('connectLab: token: give the control API token (--token or WEBHOOK_LAB_TOKEN of webhook-lab serve)');
  const api = httpApi(root, options.token);
  // Each answer is held to its declared shape (httpApi): a server that is not the lab is refused there.
  const health = await api('health', {});
  const sources = (await api('listSources', {})).map((s) => ({ id: s.id, name: s.name, writeKey: s.writeKey }));
  let source = sources[0];
  if (options.source !== undefined) {
    const named = sources.find((s) => s.name === options.source);
    if (!named) throw new TypeError(`connectLab: source: the lab has no source named ${JSON.stringify(options.source)} (it has ${sources.map((s) => JSON.stringify(s.name)).join(', ') || 'none'})`);
    source = named;
  }
  return createHandle({
    api,
    collectorUrl: health.collectorUrl,
    writeKey: source?.writeKey ?? '',
    sources,
    apiUrl: `${root}/api`,
    token: options.token,
    uiUrl: await uiOf(root, options.token),
    sourceId: options.source === undefined ? undefined : source.id,
    pollMs: POLL_HTTP_MS,
  });
}
