import type { ServerResponse } from 'node:http';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startReceiver, type TestReceiver } from '../helpers/receiver';
import { startTestEngine, waitFor, type TestEngine } from '../helpers/engine';
import { PROBE_WAIT_MS } from '../../src/main/engine/probe/probe-sender';

// Issue 25: every request is one attempt and independent checks run in parallel, so a whole run
// ends within 60 s even when nothing is ever answered; connected but silent is a latency failure,
// not "unreachable".

let te: TestEngine;
let silent: TestReceiver;
const held: ServerResponse[] = [];
/**
 * Each request's wave: 1 + the deepest wave of the requests whose connections had closed (the probe
 * gave up on them) when it arrived. Nothing is answered, so a request sent after another's wait
 * arrives a wave deeper; requests sent together share a wave.
 */
const waves: number[] = [];
let deepestClosed = 0;

beforeAll(async () => {
  te = await startTestEngine();
  silent = await startReceiver((_req, res) => {
    const wave = deepestClosed + 1;
    waves.push(wave);
    held.push(res);
    res.on('close', () => (deepestClosed = Math.max(deepestClosed, wave)));
  });
});
afterAll(async () => {
  for (const res of held) res.destroy();
  await silent.close();
  await te.stop();
});

it('a receiver that never answers: done within 60 s, latency fails, not unreachable', async () => {
  const t0 = performance.now();
  const started = await te.call('startProbe', { url: `${silent.url}/hook`, secret: 's', standardWebhooksSecret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw' });
  const r = await waitFor(async () => {
    const x = await te.call('getProbe', { id: started.id });
    return x.state === 'done' ? x : null;
  }, 'the probe to finish', 70_000);
  const took = Math.round(performance.now() - t0);
  const depth = Math.max(...waves);
  console.log(`probe of a receiver that never answers: ${took} ms, ${waves.length} requests in ${depth} waves`);
  // Within 60 s told by the requests, not the clock: each waits at most PROBE_WAIT_MS (one attempt),
  // so the run's length is how many waits follow one another.
  expect(depth * PROBE_WAIT_MS).toBeLessThan(60_000);
  expect(r.unreachable).toBe(false);
  const latency = r.checks.find((c) => c.name === 'latency')!;
  expect(latency.verdict).toBe('fail');
  expect(latency.evidence.every((e) => e.error?.startsWith('timed out after 10000 ms'))).toBe(true);
}, 80_000);
