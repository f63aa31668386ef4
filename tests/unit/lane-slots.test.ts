import { describe, expect, it } from 'vitest';
import { LaneClosedError, LaneScheduler } from '../../src/main/engine/dispatcher/lane-scheduler';
import type { ActiveDelivery } from '../../src/main/engine/store/delivery.types';

// Requests the schedule does not admit (a bulk retry's, a replay's, a receiver check's) take slots in
// the same lanes (issue 41): served before the lane's deliveries as it frees, up to half the lane
// while deliveries wait, refused once the dispatcher stops.

const URL_A = 'http://127.0.0.1:9/a';

function delivery(id: number, url = URL_A): ActiveDelivery {
  return {
    id, callId: id, sourceId: 's', type: 'track', state: 'pending', urls: [{ url, headers: {} }], pendingUrls: [0], round: 0, attemptCount: 0, simElapsedMs: 0,
    firstAttemptAt: null, nextAttemptAt: null, body: Buffer.from('{}'), urlStates: [['pending', null, 0]], frozen: { userAgent: 'ua', signature: null },
    kind: 'classic', method: 'POST', timeoutMs: null, standardWebhooks: null, mapping: null, itemCount: 1,
  };
}

function scheduler(requests: number) {
  const launched: { id: number; release: () => void }[] = [];
  let open = true;
  const s = new LaneScheduler(
    { requests, queue: 100 },
    {
      ledger: { park: () => undefined, claimParked: () => [] },
      launch: (d, sendable, _deferred, release) => launched.push({ id: d.id, release: () => release(sendable[0]!) }),
      running: () => false,
      open: () => open,
      failed: (err) => {
        throw err;
      },
    },
  );
  return { s, launched, pause: () => (open = false) };
}

/** Lets the scheduler's end-of-tick drain run. */
const tick = () => new Promise((r) => setImmediate(r));

describe('lane slots for requests the schedule does not admit', () => {
  it('are granted at once while the lane has room, and count against it', async () => {
    const { s, launched } = scheduler(2);
    const release = await s.slot(URL_A);
    s.enqueue([delivery(1), delivery(2)]);
    expect(launched.map((l) => l.id)).toEqual([1]);
    release();
    release(); // a second release is a no-op
    await tick();
    expect(launched.map((l) => l.id)).toEqual([1, 2]);
  });

  it('wait for a full lane and are served before the deliveries waiting in it, up to half the lane', async () => {
    const { s, launched } = scheduler(4);
    s.enqueue([1, 2, 3, 4, 5, 6].map((id) => delivery(id)));
    expect(launched.map((l) => l.id)).toEqual([1, 2, 3, 4]);
    const granted: number[] = [];
    const waits = [1, 2, 3].map((k) => s.slot(URL_A).then((r) => (granted.push(k), r)));
    // Four slots free: two go to the waiting requests (half the lane), then the deliveries; the third request waits for a request's slot.
    for (const l of launched.splice(0, 4)) l.release();
    await tick();
    expect(granted).toEqual([1, 2]);
    expect(launched.map((l) => l.id)).toEqual([5, 6]);
    const [r1] = await Promise.all([waits[0]!, waits[1]!]);
    r1();
    await tick();
    expect(granted).toEqual([1, 2, 3]);
  });

  it('a lane whose parked rows are gone (canceled meanwhile) gives its free slot to a waiting request at once', async () => {
    const { s, launched } = scheduler(4);
    const held = [await s.slot(URL_A), await s.slot(URL_A)];
    s.enqueue([delivery(1), delivery(2)]);
    // A retry parks (its row waits); the claim below finds nothing left (the fake ledger's is empty).
    s.enqueue([{ ...delivery(3), state: 'retrying' }]);
    let granted = false;
    void s.slot(URL_A).then(() => (granted = true));
    // Half the lane is held by requests while a delivery waits: this one waits for a delivery's slot.
    launched.splice(0, 1)[0]!.release();
    await tick();
    expect(granted).toBe(true);
    expect(held).toHaveLength(2);
  });

  it('take every free slot while no delivery waits, or while sending is paused', async () => {
    const { s, launched, pause } = scheduler(2);
    s.enqueue([delivery(1), delivery(2), delivery(3)]);
    const granted: number[] = [];
    void s.slot(URL_A).then(() => granted.push(1));
    void s.slot(URL_A).then(() => granted.push(2));
    pause();
    for (const l of launched.splice(0)) l.release();
    await tick();
    expect(granted).toEqual([1, 2]);
  });

  it('are refused when the dispatcher stops, waiting or asked for after', async () => {
    const { s } = scheduler(1);
    await s.slot(URL_A);
    const waiting = s.slot(URL_A);
    s.close();
    await expect(waiting).rejects.toBeInstanceOf(LaneClosedError);
    await expect(s.slot(URL_A)).rejects.toMatchObject({ status: 503 });
  });

  it('are per lane: another receiver path is not held up', async () => {
    const { s } = scheduler(1);
    await s.slot(URL_A);
    await expect(s.slot('http://127.0.0.1:9/b')).resolves.toBeTypeOf('function');
  });
});
