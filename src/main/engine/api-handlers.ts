import type { ApiHandlers } from '../../shared/api.contract';
import type { CallDetail } from '../../shared/types';
import { sidesStopped, stoppedReason } from '../../shared/actions/mode';
import type { simulationOps } from '../../shared/simulation.contract';
import type { demoOps } from '../../shared/demo.contract';
import type { probeOps } from '../../shared/probe.contract';
import { SAMPLE_CALLS, sampleCall } from '../../shared/sample-calls';
import type { Store } from './store/store';
import { newWriteKey } from './store/sources.repo';
import { newSecret } from '../../shared/new-secret';
import { HttpError, notFound } from './errors';
import type { Dispatcher } from './dispatcher/dispatcher';
import type { Ingest } from './collector/ingest';
import type { EventHub } from './event-hub';
import type { LibraryMetrics } from './collector/library-metrics';
import { analyticsNextAssets } from './collector/analytics-next-assets';
import type { FaultInjector } from './collector/fault-injector';
import { bulkCallHandlers } from './calls-bulk';
import { actionsHandlers } from './actions/preview';
import { refuseShortNewKey } from './sw-key-policy';
import { trackingPlanHandlers } from './tracking-plans/handlers';
import { probeFilter } from './probe/probe-filter';
import type { CallDetails } from './call-detail';
import type { TrackingPlans } from './tracking-plans/service';
import type { LoopDelay } from './loop-delay';
import { verifySignature } from './verify-signature';

export type CoreHandlers = Omit<ApiHandlers, 'clientSend' | 'clientFlush' | 'clientState' | 'clientGetSettings' | 'clientUpdateSettings' | keyof typeof simulationOps | keyof typeof demoOps | keyof typeof probeOps>;

export interface HandlerDeps {
  store: Store;
  plans: TrackingPlans;
  /** The read model of a call (call-detail.ts). */
  details: CallDetails;
  dispatcher: Dispatcher;
  ingest: Ingest;
  events: EventHub;
  now: () => number;
  collectorUrl: () => string;
  dataDir: string;
  startedAt: number;
  version: string;
  libraryMetrics: LibraryMetrics;
  faults: FaultInjector;
  loopDelay: LoopDelay;
}

/** The engine side of every core operation; input arrives parsed by the op's schema. */
export function coreHandlers(d: HandlerDeps): CoreHandlers {
  const { store } = d;
  const sourcesChanged = () => d.events.emit({ type: 'sources.changed' });
  return {
    health: () => ({
      ok: true,
      version: d.version,
      collectorUrl: d.collectorUrl(),
      uptimeMs: d.now() - d.startedAt,
      dataDir: d.dataDir,
      calls: store.calls.count(),
      pendingDeliveries: store.deliveries.countUnfinished(),
      parkedDeliveries: store.deliveries.countParked(),
      storage: store.health.get(),
      eventLoop: d.loopDelay.figures(),
    }),

    listSources: () => store.sources.list(),
    createSource: (input) => {
      refuseShortNewKey(input.webhooks);
      const s = store.sources.create({ name: input.name, writeKey: input.writeKey, webhooks: input.webhooks, collectorFaults: input.collectorFaults }, d.now());
      sourcesChanged();
      return s;
    },
    updateSource: async (input) => {
      const before = store.sources.get(input.id)?.webhooks;
      refuseShortNewKey(input.webhooks, before);
      const s = store.sources.update(input.id, { name: input.name, webhooks: input.webhooks, collectorFaults: input.collectorFaults }, d.now());
      sourcesChanged();
      const stopped = before ? sidesStopped(before, s.webhooks) : null;
      if (stopped) await d.dispatcher.cancelSource(s.id, stoppedReason(stopped), stopped);
      return s;
    },
    rotateSecret: (input) => {
      const s = store.sources.rotate(input.id, input.which, input.secret ?? newSecret(input.which), d.now(), input.overlap ?? true);
      sourcesChanged();
      return s;
    },
    regenerateWriteKey: (input) => {
      const s = store.sources.update(input.id, { writeKey: newWriteKey() });
      sourcesChanged();
      return s;
    },
    deleteSource: async (input) => {
      store.sources.delete(input.id);
      d.faults.forget(input.id);
      sourcesChanged();
      await d.dispatcher.cancelSource(input.id, 'canceled: its source was deleted');
      return { ok: true as const };
    },
    sendTestCall: async (input) => {
      const source = store.sources.get(input.id);
      if (!source) throw notFound(`source ${input.id}`);
      const sample = sampleCall('order-completed') ?? SAMPLE_CALLS[0];
      // Through the collector's own logic (normalize, store, route), as a client's call would go.
      const res = await d.ingest.handle({
        path: '/v1/track',
        route: 'track',
        authorization: `Basic ${Buffer.from(`${source.writeKey}:`).toString('base64')}`,
        contentType: 'application/json',
        userAgent: 'Webhook Lab (test call)',
        // It tests the source's destinations, not a client's retries: faults are for the latter (README, Decisions).
        bypassFaults: true,
        body: Buffer.from(JSON.stringify({ ...sample.message, userId: sample.message.userId ?? 'test-user' })),
      });
      const id = res.stored?.calls[0]?.id;
      if (!id) throw new HttpError(res.status, res.body.message ?? 'test call was not accepted');
      return getDetail(d.details, id);
    },

    listMessages: (input) => store.calls.list(probeFilter(store, input)),
    getMessage: (input) => getDetail(d.details, input.id),
    listMessageDetails: (input) => {
      const ids = store.calls.idsAfter(input.after, input.limit, input.sourceId);
      // One deleted meanwhile (a clear, retention) is left out.
      const items = d.details.many(ids, { pageBatches: true });
      return { items, next: ids.length === input.limit ? ids[ids.length - 1] : null };
    },
    getBatchItems: (input) => store.deliveries.batchItems(input.id, input.offset, input.limit) ?? notFoundBatch(input.id),
    getStats: (input) => store.stats({ since: input.since === undefined ? undefined : Date.parse(input.since), sourceId: input.sourceId }),
    replayMessage: (input) => d.dispatcher.replay(input.id, { urlIndex: input.urlIndex, body: input.body, deliveryId: input.deliveryId }),
    ...bulkCallHandlers(d),
    ...actionsHandlers(),
    ...trackingPlanHandlers(d),

    getSettings: () => store.settings.get(),
    updateSettings: (input) => {
      const before = store.settings.get();
      const after = store.settings.apply(input);
      d.dispatcher.settingsChanged(before, after);
      d.events.emit({ type: 'settings.changed', settings: after });
      // A window it closed stays closed: the sources' secret versions no longer say rotated.
      if (after.secretRotationWindowMs !== before.secretRotationWindowMs) sourcesChanged();
      return after;
    },

    verifySignature: (input) => verifySignature(store, input, d.now()),

    getCollectorFaultCounts: () => d.faults.snapshot(),

    getLibraryMetrics: () => {
      const assets = analyticsNextAssets();
      return { analyticsNext: assets ? { version: assets.version } : null, ...d.libraryMetrics.snapshot() };
    },
  };
}

/** A large Actions batch is paged (getBatchItems): its body here is only its first items. */
function getDetail(details: CallDetails, id: number): CallDetail {
  const detail = details.one(id, { pageBatches: true });
  if (!detail) throw notFound(`message ${id}`);
  return detail;
}

function notFoundBatch(id: number): never {
  throw notFound(`Actions batch delivery ${id}`);
}
