import type { FastifyInstance } from 'fastify';
import type { ApiHandlers } from '../../shared/api.contract';
import type { Engine, EngineOptions } from './engine.types';
import { Store } from './store/store';
import { prepareDataFolder } from './store/data-folder';
import { Ingest } from './collector/ingest';
import { startCollector } from './collector/collector-server';
import { LibraryMetrics } from './collector/library-metrics';
import { FaultInjector } from './collector/fault-injector';
import { Dispatcher } from './dispatcher/dispatcher';
import { HttpSender } from './dispatcher/http-sender';
import { arrivalPlanner } from './dispatcher/delivery-plan';
import { EventHub } from './event-hub';
import { InFlightNotices } from './in-flight-notices';
import { coreHandlers } from './api-handlers';
import { TrackingPlans } from './tracking-plans/service';
import { CallDetails } from './call-detail';
import { applyConfig, cancelTurnedOff } from './apply-config';
import type { OwnedPort } from './config-receivers';
import type { StoppedSide } from '../../shared/actions/mode';
import { ReceiversService } from './simulation/receivers-service';
import { systemClock, type Clock } from './clock';
import { AppClient } from './app-client';
import { VERSION } from './version';
import { maskUrlPasswordsIn } from '../../shared/url-credentials';
import { startSimulation, type Simulation } from './simulation';
import { demoHandlers } from './demo';
// Segment's mapping-kit and FQL checks, into the shared schema every input of the engine goes through.
import './actions/rules';
import { shortKeyWarnings } from './sw-key-policy';
import { Probes } from './probe/probe-service';
import { LoopDelay } from './loop-delay';
import { backgroundSlices } from './slice-meter';
import { DEFAULT_COLLECTOR_PORT } from '../../shared/ports';

const RETENTION_EVERY_MS = 30_000;

export async function startEngine(opts: EngineOptions & { clock?: Clock }): Promise<Engine> {
  const clock = opts.clock ?? systemClock;
  const now = () => clock.now();
  // Owner-only folder and files before anything is written there; one log line when it changed something.
  const folderNotice = prepareDataFolder(opts.dataDir, { owned: opts.ownedDataDir });
  if (folderNotice) opts.log?.(folderNotice);
  const store = new Store({ dataDir: opts.dataDir, nativeBinding: opts.sqliteNativeBinding, now, log: opts.log });
  let madePlans: TrackingPlans | undefined;
  let collector: { app: FastifyInstance; url: string } | undefined;
  let simulation: Simulation | undefined;
  let receivers: ReceiversService | undefined;
  let loopDelay: LoopDelay | undefined;
  try {
    const events = new EventHub((ids) => store.calls.summaries(ids));
    // Every line the engine logs goes out with URL passwords masked (README, Decisions).
    const sink = opts.log;
    const log = sink ? (line: string) => sink(maskUrlPasswordsIn(line)) : () => undefined;
    // The stored tracking plans and connections, mirrored once for everything below that reads them.
    const plans = (madePlans = new TrackingPlans(store));
    plans.logTo(log);
    opts.onStore?.(store, plans);
    // The mock receivers' listeners open first: a config file naming one gets this lab's URL for it.
    // (Deleting a receiver may cancel a source's deliveries: the dispatcher is made below, before any request.)
    const cancelDeliveries = (id: string, reason: string, side?: StoppedSide) => dispatcher.cancelSource(id, reason, side);
    receivers = new ReceiversService({ store, events, now, log, dataDir: opts.dataDir, cancelDeliveries }, opts.mockReceiverPorts);
    await receivers.listen();
    // Checked whole and applied in one transaction, or refused (ConfigRefused) with nothing changed.
    // Its tracking plans are compiled in check workers first (issue 38): none on the event loop.
    if (opts.config) await plans.prepareConfig(opts.config);
    const applied = opts.config ? applyConfig(store, plans, opts.config, now(), receivers) : undefined;
    if (opts.overrides && Object.keys(opts.overrides).length > 0) store.settings.apply(opts.overrides);

    const inFlightNotices = new InFlightNotices(store, events);
    // Connections are not what limits sending: each receiver endpoint's lane does (dispatcher/lanes.ts),
    // and several lanes may share an origin (the mock receivers do). With no cap on connections, a
    // request whose lane gave it a slot goes on the wire at once, so its timeout starts when it is sent.
    const sender = new HttpSender({ now, connectionsPerOrigin: null });
    for (const line of shortKeyWarnings(store.sources.list())) log(`warning: ${line}`);
    const dispatcher = new Dispatcher({
      store,
      sender,
      now,
      random: () => clock.random(),
      onAttempts: (callId, attempts, delivery) => {
        if (delivery) for (const attempt of attempts) events.emit({ type: 'attempt.recorded', callId, attempt, delivery });
        events.touch(callId);
      },
      onInFlight: (callId, d) => inFlightNotices.add(callId, d),
      lanes: opts.lanes,
      omittedByPlan: (callId) => plans.repo.ofCall(callId)?.omitted ?? [],
      onError: (err) => log(`dispatcher: ${(err as Error)?.stack ?? String(err)}`),
    });
    store.health.onChange((storage) => {
      events.emit({ type: 'storage.changed', storage });
      log(storage.ok ? 'storage: writes succeed again; collector and dispatcher resumed' : `storage: ${storage.message}`);
    });
    const faults = new FaultInjector(now());
    // Compiled after the start, in slices (a large plan held the first answer for ~0.6 s).
    // A plan found not to compile then is logged, and the plans screen told to read the list again.
    plans.startWarmUp(
      (line) => {
        log(`warning: ${line}`);
        events.emit({ type: 'plans.changed' });
      },
      log,
    );
    const ingest = new Ingest(
      store,
      now,
      // The dispatcher's rule decides which arriving calls are forwarded; the store records them.
      arrivalPlanner(() => store.settings.get()),
      (stored) => {
        if (stored.calls.length) events.emit({ type: 'calls.stored', calls: stored.calls });
        dispatcher.enqueue(stored.deliveries);
        dispatcher.batcher.queued(stored.batched);
      },
      faults,
      // Tracking plans (issue 24): compiled once here, checked per call of a connected source.
      plans,
    );

    const libraryMetrics = new LibraryMetrics(now);
    const loop = new LoopDelay();
    loopDelay = loop;
    collector = await startCollector(ingest, {
      host: opts.collectorHost ?? '127.0.0.1',
      port: opts.collectorPort ?? DEFAULT_COLLECTOR_PORT,
      browser: { sources: store.sources, metrics: libraryMetrics },
    });
    const collectorUrl = collector.url;
    // Where this lab listens besides its mock receivers: a config's URL at one of these is its own.
    const ownedPorts: OwnedPort[] = [{ port: Number(new URL(collectorUrl).port), what: 'collector' }];
    const servesApiOn = (port: number) => {
      if (port > 0 && !ownedPorts.some((o) => o.port === port)) ownedPorts.push({ port, what: 'control API' });
    };
    if (opts.apiPort) servesApiOn(opts.apiPort);
    // Before resuming: a source the config file turned off must not send what it left unfinished.
    if (applied) await cancelTurnedOff(applied, (id, reason, side) => dispatcher.cancelSource(id, reason, side));
    dispatcher.start();

    // The read model of a call, for the API and the export.
    const details = new CallDetails(store, plans);
    const client = new AppClient(store, () => collectorUrl, (state) => events.emit({ type: 'client.changed', state }));
    simulation = await startSimulation(
      {
        store, ingest, events, plans, details, now, random: () => clock.random(), dataDir: opts.dataDir, collectorUrl: () => collectorUrl, log,
        cancelDeliveries: (id, reason, side) => dispatcher.cancelSource(id, reason, side),
      },
      { receivers, ownedPorts: () => ownedPorts },
    );
    if (applied) {
      const warnings = await simulation.configApplied(opts.config!, { ...applied, turnedOff: [] });
      for (const w of warnings) log(`config: ${w.code !== 'mock_receiver_resolved' ? 'warning' : 'note'}: ${w.path}: ${w.message}`);
    }
    const probes = new Probes({ store, ingest, events, now, run: (req) => dispatcher.run(req) });
    const base = {
      ...probes.handlers(),
      ...coreHandlers({ store, plans, details, dispatcher, ingest, events, now, collectorUrl: () => collectorUrl, dataDir: opts.dataDir, startedAt: now(), version: VERSION, libraryMetrics, faults, loopDelay: loop }),
      ...client.handlers(),
      ...simulation.handlers,
    };
    // The first-run demo is made of the operations above.
    const handlers: ApiHandlers = { ...base, ...demoHandlers({ store, events, handlers: base }) };

    let stopping: Promise<void> | undefined;
    // A chunk of calls a turn of the loop: 100,000 calls over the limit held it for seconds in one go.
    let pruning = false;
    const prune = async () => {
      if (pruning || stopping) return;
      pruning = true;
      let removed = 0;
      try {
        for (let more = true; more && !stopping; ) {
          const slice = backgroundSlices.time('retention', () => store.pruneSlice());
          removed += slice.removed;
          more = slice.more;
          if (more) await new Promise((resolve) => setImmediate(resolve));
        }
      } catch (err) {
        opts.log?.(`retention failed: ${(err as Error).message}`);
      } finally {
        pruning = false;
      }
      if (removed > 0) {
        opts.log?.(`retention: pruned ${removed} old calls`);
        events.emit({ type: 'calls.removed', count: removed });
      }
      // What retention freed (now or before a restart) goes back to the file system, in small steps.
      if (!stopping) store.giveSpaceBack();
    };
    const retentionTimer = setInterval(prune, RETENTION_EVERY_MS);
    retentionTimer.unref();
    setImmediate(prune);

    const app = collector.app;
    const sim = simulation;
    return {
      collectorUrl,
      dataDir: opts.dataDir,
      handlers,
      openExport: (input) => sim.openExport(input),
      onEvents: (listener) => events.on(listener),
      servesApiOn,
      abandonUnanswered: () => sim.stopImports(),
      stop: () =>
        (stopping ??= (async () => {
          // Requests to the control API are answered or cut by now: an import still running has no client.
          sim.stopImports();
          clearInterval(retentionTimer);
          plans.stopWarmUp();
          inFlightNotices.stop();
          await client.close(); // its last flush may still reach the embedded collector
          await app.close(); // stop accepting; requests in progress finish (and commit) first
          await plans.close(); // their checks done, the check workers end
          await sim.stop();
          // Requests waiting for a receiver's lane are refused first: a probe waiting behind a busy
          // source's requests ends now instead of holding the stop.
          dispatcher.closeLanes();
          await probes.stop();
          await dispatcher.stop();
          // Past the grace, rounds still waiting on a receiver are abandoned (re-sent at the next start).
          await sender.close({ force: true });
          loop.stop();
          store.close();
        })()),
    };
  } catch (err) {
    loopDelay?.stop();
    await madePlans?.close().catch(() => undefined);
    await collector?.app.close().catch(() => undefined);
    await (simulation ?? receivers)?.stop().catch(() => undefined);
    store.close();
    throw err;
  }
}
