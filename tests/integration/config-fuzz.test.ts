import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfigFile } from '../../src/main/load-config';
import { startControlServer } from '../../src/main/server/control-server';
import { openDbFile } from '../helpers/db-file';
import { HANG_BOUND_MS, whileProgressing } from '../helpers/progress';
import { startTestEngine, type TestEngine } from '../helpers/engine';
import { FUZZ_BASE, generateConfigs, generateRuleInputs, type FuzzInput } from '../helpers/config-fuzz';
import { CLI, ensureBuilt, ROOT } from '../helpers/serve';

// Issue 22: configs and audience rules attacked the way a fuzzer would. Inputs generated from a seed
// (FUZZ_SEED, printed so a failure can be replayed) against a real engine, SQLite file and control
// API, and as config files: every answer is 200 or a documented 4xx, never a 5xx or a crash, and a
// refused config (or audience edit) leaves the store as it was, on disk and as the API shows it.

const SEED = Number(process.env.FUZZ_SEED ?? 20261126);
const CONFIGS = Number(process.env.FUZZ_COUNT ?? 400);
const RULES = Math.ceil(CONFIGS * 0.75);
const TOKEN = 'config-fuzz-token';

let t: TestEngine;
let control: Awaited<ReturnType<typeof startControlServer>>;
let dir: string;
let baseSourceId: string;
let baseAudienceId: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'wl-config-fuzz-'));
  t = await startTestEngine({
    config: {
      sources: [FUZZ_BASE.source],
      mockReceivers: [FUZZ_BASE.receiver],
      audiences: [{ name: FUZZ_BASE.audience, sources: [FUZZ_BASE.source.name], rule: { combine: 'and', conditions: [{ kind: 'trait', trait: 'plan', op: 'exists' }] } }],
    },
  });
  control = await startControlServer({ engine: t.engine, host: '127.0.0.1', port: 0, token: TOKEN });
  baseSourceId = (await t.call('listSources', {}))[0].id;
  baseAudienceId = (await t.call('listAudiences', {}))[0].id;
});

afterAll(async () => {
  await control?.app.close();
  await t?.stop();
  rmSync(dir, { recursive: true, force: true });
});

async function api(method: string, path: string, body?: string): Promise<{ status: number; text: string }> {
  const res = await fetch(`${control.url}/api${path}`, {
    method,
    headers: { authorization: `Bearer ${TOKEN}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body,
  });
  return { status: res.status, text: await res.text() };
}

/** What a config can change: its rows in the SQLite file, and the config the API shows (memory). */
async function snapshot(): Promise<string> {
  const db = openDbFile(t.dataDir);
  try {
    const rows = {
      sources: db.prepare('SELECT id, name, write_key, webhooks FROM sources ORDER BY id').all(),
      settings: db.prepare('SELECT key, value FROM settings ORDER BY key').all(),
      receivers: db.prepare('SELECT id, name, definition FROM mock_receivers ORDER BY id').all(),
      audiences: db.prepare('SELECT id, name, key, definition, source_ids, sync_interval_ms FROM audiences ORDER BY id').all(),
      trackingPlans: db.prepare('SELECT id, name, rules FROM tracking_plans ORDER BY id').all(),
      planConnections: db.prepare('SELECT * FROM tracking_plan_connections ORDER BY source_id').all(),
    };
    const shown = await api('GET', '/config');
    return JSON.stringify({ rows, shown: shown.text });
  } finally {
    db.close();
  }
}

const describeInput = (i: FuzzInput) => `#${i.n} ${i.kind} (${i.text.length} chars: ${i.text.slice(0, 120)})`;

describe('seeded config and audience rule fuzz', () => {
  // Each test's work grows with the machine's slowness (119 s of 180 pinned to a core beside a busy
  // loop and other work): what fails it is a stall, not the time it takes.
  it(`${CONFIGS} generated configs to POST /api/config: 200, 400, 409 or 413, and a refused one changes nothing`, { timeout: HANG_BOUND_MS }, () => whileProgressing('config fuzz', configsOverApi));

  async function configsOverApi(step: () => void): Promise<void> {
    console.log(`config fuzz: seed ${SEED}, ${CONFIGS} configs, ${RULES} audience rules (replay with FUZZ_SEED=${SEED} npx vitest run tests/integration/config-fuzz.test.ts)`);
    const started = Date.now();
    const failures: string[] = [];
    const counts = new Map<number, number>();
    for (const input of generateConfigs(SEED, CONFIGS)) {
      const before = await snapshot();
      const r = await api('POST', '/config', input.text);
      step();
      counts.set(r.status, (counts.get(r.status) ?? 0) + 1);
      if (![200, 400, 409, 413].includes(r.status)) failures.push(`${describeInput(input)}: answered ${r.status} ${r.text.slice(0, 200)}`);
      else if (r.status !== 200 && (await snapshot()) !== before) failures.push(`${describeInput(input)}: refused with ${r.status} but the store changed`);
    }
    expect(failures.slice(0, 10), `${failures.length} of ${CONFIGS} configs misanswered (seed ${SEED})`).toEqual([]);
    expect((await api('GET', '/health')).status).toBe(200);
    console.log(`config fuzz: seed ${SEED}: configs answered ${JSON.stringify(Object.fromEntries(counts))} in ${Date.now() - started} ms`);
    // Both outcomes were exercised.
    expect(counts.get(200)).toBeGreaterThan(CONFIGS / 20);
    expect((counts.get(400) ?? 0) + (counts.get(409) ?? 0)).toBeGreaterThan(CONFIGS / 4);
  }

  it(`the same ${CONFIGS} as config files: loaded or refused with a ConfigError, then applied or refused with nothing changed`, { timeout: HANG_BOUND_MS }, () =>
    whileProgressing('config files fuzz', configFiles));

  async function configFiles(step: () => void): Promise<void> {
    const file = join(dir, 'webhook-lab.json');
    const failures: string[] = [];
    const refusedFiles: string[] = [];
    let applied = 0;
    for (const input of generateConfigs(SEED, CONFIGS)) {
      step();
      writeFileSync(file, input.text);
      let config;
      try {
        config = loadConfigFile(file);
      } catch (err) {
        if (!(err instanceof ConfigError)) failures.push(`${describeInput(input)}: loading threw ${(err as Error).stack}`);
        else if (refusedFiles.length < 4 && input.kind !== 'bad json') refusedFiles.push(input.text);
        continue;
      }
      // As serve applies a file at start: the same checks and one transaction (apply-config.ts).
      const before = await snapshot();
      try {
        await t.call('importConfig', config);
        applied++;
      } catch (err) {
        const status = (err as { status?: number }).status;
        if (status !== 400 && status !== 409) failures.push(`${describeInput(input)}: applying threw ${(err as Error).stack}`);
        else if ((await snapshot()) !== before) failures.push(`${describeInput(input)}: refused with ${status} but the store changed`);
      }
    }
    expect(failures.slice(0, 10), `${failures.length} of ${CONFIGS} config files mishandled (seed ${SEED})`).toEqual([]);
    expect(applied).toBeGreaterThan(0);

    // A few refused files through the real CLI: exit 2 with a message, never a stack trace.
    ensureBuilt();
    for (const [i, text] of refusedFiles.entries()) {
      const path = join(dir, `refused-${i}.json`);
      writeFileSync(path, text);
      const r = spawnSync(process.execPath, [CLI, 'serve', '--data-dir', join(dir, `data-${i}`), '--collector-port', '0', '--ui-port', '0', '--config', path], { cwd: ROOT, encoding: 'utf8', timeout: 20_000 });
      expect([r.status, r.stderr]).toEqual([2, expect.stringContaining(`config file ${path}`)]);
      expect(r.stderr).not.toMatch(/\n\s+at /);
      step();
    }
  }

  it(`${RULES} generated audience rules (preview, create, update): never a 5xx, and a refused edit changes nothing`, { timeout: HANG_BOUND_MS }, () =>
    whileProgressing('audience rule fuzz', audienceRules));

  async function audienceRules(step: () => void): Promise<void> {
    const allowed: Record<string, number[]> = { previewAudience: [200, 400, 413], createAudience: [200, 400, 404, 409, 413], updateAudience: [200, 400, 404, 409, 413] };
    const route: Record<string, [string, string]> = { previewAudience: ['POST', '/audiences/preview'], createAudience: ['POST', '/audiences'], updateAudience: ['PATCH', `/audiences/${baseAudienceId}`] };
    const failures: string[] = [];
    const counts = new Map<string, number>();
    for (const input of generateRuleInputs(SEED, RULES, baseSourceId)) {
      const before = await snapshot();
      const r = await api(...route[input.op], input.text);
      step();
      counts.set(`${input.op} ${r.status}`, (counts.get(`${input.op} ${r.status}`) ?? 0) + 1);
      if (!allowed[input.op].includes(r.status)) failures.push(`${input.op} ${describeInput(input)}: answered ${r.status} ${r.text.slice(0, 200)}`);
      else if (r.status !== 200 && input.op !== 'previewAudience' && (await snapshot()) !== before) failures.push(`${input.op} ${describeInput(input)}: refused with ${r.status} but the store changed`);
    }
    expect(failures.slice(0, 10), `${failures.length} of ${RULES} audience rules misanswered (seed ${SEED})`).toEqual([]);
    expect((await api('GET', '/health')).status).toBe(200);
    console.log(`config fuzz: seed ${SEED}: audience rules answered ${JSON.stringify(Object.fromEntries([...counts].sort()))}`);
  }

  it('the same seed generates the same inputs', () => {
    const digest = (inputs: FuzzInput[]) => createHash('sha256').update(JSON.stringify(inputs)).digest('hex');
    const a = digest([...generateConfigs(SEED, 300), ...generateRuleInputs(SEED, 300, 'id')]);
    expect(digest([...generateConfigs(SEED, 300), ...generateRuleInputs(SEED, 300, 'id')])).toBe(a);
    expect(digest([...generateConfigs(SEED + 1, 300), ...generateRuleInputs(SEED + 1, 300, 'id')])).not.toBe(a);
  });
});
