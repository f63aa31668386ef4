import { randomBytes } from 'node:crypto';
import type { ApiHandlers } from '../../shared/api.contract';
import type { Demo, RemovedDemo, demoOps } from '../../shared/demo.contract';
import type { EventHub } from './event-hub';
import type { Store } from './store/store';

// The first-run demo (src/shared/demo.contract.ts), built from the same operations a user would
// call: create a source, create a mock receiver with a secret, attach it (the source takes the
// receiver's secret, so the call arrives signed and the receiver verifies it), send a test call.
// What it created is marked in the settings table, so removing it deletes exactly that.

type DemoHandlers = Pick<ApiHandlers, keyof typeof demoOps>;
type Used = Pick<ApiHandlers, 'listReceivers' | 'createReceiver' | 'attachReceiver' | 'deleteReceiver' | 'createSource' | 'deleteSource' | 'sendTestCall'>;

const MARK = 'demo';
interface Mark {
  sourceId: string;
  receiverId: string;
  callIds: number[];
}

export const DEMO_SOURCE = 'Demo source';
export const DEMO_RECEIVER = 'Demo receiver';

export function demoHandlers(d: { store: Store; events: EventHub; handlers: Used }): DemoHandlers {
  const { store, handlers: h } = d;
  // One demo operation at a time: two quick clicks must not create two demos.
  let queue: Promise<unknown> = Promise.resolve();
  const serial = <T>(fn: () => Promise<T>): Promise<T> => {
    const next = queue.catch(() => undefined).then(fn);
    queue = next;
    return next;
  };
  const mark = () => store.settings.getExtra<Mark | null>(MARK) ?? null;

  const view = async (m: Mark): Promise<Demo> => ({
    source: store.sources.get(m.sourceId) ?? null,
    receiver: (await h.listReceivers({})).find((r) => r.id === m.receiverId) ?? null,
    callIds: m.callIds,
  });

  const remove = async (): Promise<RemovedDemo> => {
    const m = mark();
    const out: RemovedDemo = { sourceRemoved: false, receiverRemoved: false, callsRemoved: 0 };
    if (!m) return out;
    if (store.sources.get(m.sourceId)) {
      await h.deleteSource({ id: m.sourceId }); // ends the sample call's unfinished delivery first
      out.sourceRemoved = true;
    }
    if ((await h.listReceivers({})).some((r) => r.id === m.receiverId)) {
      await h.deleteReceiver({ id: m.receiverId, detach: true }); // from a source of the user's it was attached to, too
      out.receiverRemoved = true;
    }
    out.callsRemoved = await store.writes.run((tx) => {
      const n = store.erasure.ofCalls(tx, m.callIds);
      store.settings.setExtra(MARK, null);
      return n;
    });
    if (out.callsRemoved > 0) d.events.emit({ type: 'calls.removed', count: out.callsRemoved });
    return out;
  };

  /** A name (or path) not taken yet: "Demo source", "Demo source 2", … */
  const free = (base: string, taken: (name: string) => boolean, sep = ' ') => {
    for (let i = 1; ; i++) {
      const name = i === 1 ? base : `${base}${sep}${i}`;
      if (!taken(name)) return name;
    }
  };

  return {
    getDemo: async () => {
      const m = mark();
      if (!m) return null;
      const v = await view(m);
      return v.source || v.receiver ? v : null;
    },
    createDemo: () =>
      serial(async () => {
        const m = mark();
        if (m) {
          const v = await view(m);
          if (v.source && v.receiver) return { ...v, created: false };
          await remove(); // half a demo (a part deleted by hand): start again
        }
        const receivers = await h.listReceivers({});
        const source = await h.createSource({ name: free(DEMO_SOURCE, (n) => store.sources.byName(n) !== undefined) });
        let receiverId: string | null = null;
        try {
          const receiver = await h.createReceiver({
            name: free(DEMO_RECEIVER, (n) => receivers.some((r) => r.name === n)),
            path: free('/demo', (p) => receivers.some((r) => r.path === p), '-'),
            secret: `whsec_demo_${randomBytes(12).toString('hex')}`,
            tls: false,
            behavior: {},
          });
          receiverId = receiver.id;
          await h.attachReceiver({ id: receiver.id, sourceId: source.id });
          // Marked before the call goes out, so a failure below still leaves a removable demo.
          store.settings.setExtra(MARK, { sourceId: source.id, receiverId: receiver.id, callIds: [] } satisfies Mark);
          const call = await h.sendTestCall({ id: source.id });
          const done: Mark = { sourceId: source.id, receiverId: receiver.id, callIds: [call.call.id] };
          store.settings.setExtra(MARK, done);
          return { ...(await view(done)), created: true };
        } catch (err) {
          if (!mark()) {
            await h.deleteSource({ id: source.id });
            if (receiverId) await h.deleteReceiver({ id: receiverId, detach: true });
          }
          throw err;
        }
      }),
    removeDemo: () => serial(remove),
  };
}
