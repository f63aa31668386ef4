import { afterEach, describe, expect, it } from 'vitest';
import { rmSync } from 'node:fs';
import { invokeOp } from '../../src/main/ipc/ipc-core';
import { BodyPool } from '../../src/main/server/body-pool';
import { startTestEngine, type TestEngine } from '../helpers/engine';

// Issue 38: the desktop window's large payloads (a config of thousands of sources) are checked in the
// control API's body worker, not on the event loop the collector shares; the answers are those of the
// loop's own check, valid or not.

const open: { engine: TestEngine; bodies: BodyPool }[] = [];
afterEach(async () => {
  for (const o of open.splice(0)) {
    await o.bodies.close();
    await o.engine.stop();
    rmSync(o.engine.dataDir, { recursive: true, force: true });
  }
});

async function lab(): Promise<{ engine: TestEngine; bodies: BodyPool }> {
  const o = { engine: await startTestEngine({}), bodies: new BodyPool() };
  open.push(o);
  return o;
}

const sources = (n: number, bad?: number) =>
  Array.from({ length: n }, (_, i) => ({
    name: `s${i}`,
    writeKey: `wk_${i}`,
    webhooks: { enabled: true, sharedSecret: `secret-${i}`, urls: [{ url: i === bad ? 'ftp://nope.example/x' : `https://r.example/${i}`, headers: { 'X-Env': 'qa' } }] },
  }));

describe('IPC: a large payload is checked in the worker', () => {
  it('a config of 1,000 sources: applied as the loop applies it, and read by the worker', async () => {
    const worker = await lab();
    const loop = await lab();
    const config = { sources: sources(1000) };
    expect(JSON.stringify(config).length).toBeGreaterThan(worker.bodies.offloadBytes);
    const viaWorker = await invokeOp(worker.engine.engine.handlers, 'importConfig', config, worker.bodies);
    const onLoop = await invokeOp(loop.engine.engine.handlers, 'importConfig', config);
    expect(viaWorker).toEqual(onLoop);
    expect(viaWorker).toMatchObject({ ok: true, value: { sources: 1000 } });
    expect(worker.bodies.stats()).toEqual({ worker: 1, fallback: 0 });
    // A small payload stays on the loop.
    await invokeOp(worker.engine.engine.handlers, 'listSources', {}, worker.bodies);
    expect(worker.bodies.stats().worker).toBe(1);
  }, 120_000);

  it('an invalid one: the same 400 naming the field, nothing applied', async () => {
    const worker = await lab();
    const config = { sources: sources(1000, 713) };
    const viaWorker = await invokeOp(worker.engine.engine.handlers, 'importConfig', config, worker.bodies);
    const onLoop = await invokeOp(worker.engine.engine.handlers, 'importConfig', config);
    expect(viaWorker).toEqual(onLoop);
    expect(viaWorker).toMatchObject({ ok: false, status: 400, fields: [{ path: 'sources[713].webhooks.urls[0].url' }] });
    expect(worker.bodies.stats().worker).toBe(1);
    expect(await invokeOp(worker.engine.engine.handlers, 'listSources', {})).toMatchObject({ ok: true, value: [] });
  }, 120_000);
});
