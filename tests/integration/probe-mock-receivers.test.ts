import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MockBehavior } from '../../src/shared/mock-receiver.schema';
import type { ProbeReport } from '../../src/shared/probe.contract';
import { startTestEngine, waitFor, type TestEngine } from '../helpers/engine';

// The lab's own mock receivers as the receivers of a demo: one that enforces the signature passes
// the probe, and each flaw behaviour (accept any signature, reject duplicates, answer 400 to
// unknown types) fails exactly its check.

const SECRET = 'mock-probe-secret';
let te: TestEngine;

beforeAll(async () => {
  te = await startTestEngine();
});
afterAll(() => te.stop());

async function probeMock(name: string, behavior: MockBehavior): Promise<ProbeReport> {
  const receiver = await te.call('createReceiver', { name, path: `/${name}`, secret: SECRET, behavior });
  const started = await te.call('startProbe', { url: receiver.url, secret: SECRET });
  return waitFor(async () => {
    const r = await te.call('getProbe', { id: started.id });
    return r.state === 'done' ? r : null;
  }, 'the probe to finish', 60_000);
}

const failing = (r: ProbeReport) => r.checks.filter((c) => c.verdict === 'fail').map((c) => c.name);

describe('mock receivers under the probe', () => {
  it('enforceSignature: a careful receiver, nothing fails', async () => {
    const r = await probeMock('careful', { enforceSignature: true });
    expect(failing(r)).toEqual([]);
    const requests = await te.call('listReceiverRequests', { id: (await te.call('listReceivers', {})).find((x) => x.name === 'careful')!.id, limit: 500 });
    const refused = requests.filter((q) => q.response.status === 401);
    expect(refused).toHaveLength(3);
    expect(refused.every((q) => q.signature.state !== 'valid')).toBe(true);
  });

  it('without enforceSignature it accepts any signature: signature fails', async () => {
    expect(failing(await probeMock('any-signature', {}))).toEqual(['signature']);
  });

  it('rejectDuplicates: duplicates fails (409)', async () => {
    const r = await probeMock('no-duplicates', { enforceSignature: true, rejectDuplicates: true });
    expect(failing(r)).toEqual(['duplicates']);
    expect(r.checks.find((c) => c.name === 'duplicates')!.detail).toContain('HTTP 409');
  });

  it('knownTypes without screen: call-types fails (400 to screen)', async () => {
    const r = await probeMock('no-screen', { enforceSignature: true, knownTypes: ['identify', 'track', 'page', 'group', 'alias', 'delete'] });
    expect(failing(r)).toEqual(['call-types']);
    expect(r.checks.find((c) => c.name === 'call-types')!.detail).toMatch(/^not accepted: screen: HTTP 400/);
  });

  it('refuses knownTypes or rejectDuplicates with a per-item answer', async () => {
    await expect(te.call('createReceiver', { name: 'bad', path: '/bad', behavior: { itemStatuses: [200], rejectDuplicates: true } })).rejects.toThrow(/rejectDuplicates: reads one call per request/);
  });
});
