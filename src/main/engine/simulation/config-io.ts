import { CONFIG_VERSION, type Config, type ConfigWarning } from '../../../shared/config.schema';
import type { Audience } from '../../../shared/simulation.contract';
import { cancelTurnedOff, type ConfigApplied } from '../apply-config';
import { importConfig, stoppedImport } from '../import-config';
import type { Feature, SimulationDeps } from './simulation-deps';
import type { ReceiversService } from './receivers-service';
import { loopbackWarnings, referToReceivers, type OwnedPort } from '../config-receivers';
import { actionsMappingWarnings } from '../actions/mapping-warnings';
import { compactRetrySchedule } from '../../../shared/retry-schedule';

type Ops = 'getConfig' | 'importConfig';

/** Export the whole setup as a config file, and import one (idempotent, as at start). */
export class ConfigIo implements Feature<Ops> {
  /** The import under way: the next waits for it (each writes in slices, import-config.ts). */
  private importing: Promise<unknown> = Promise.resolve();
  /** The lab is stopping: imports under way or waiting are not committed (their clients get no answer). */
  private stopped = false;

  constructor(
    private readonly deps: SimulationDeps,
    private readonly receivers: ReceiversService,
    private readonly audiences: { list(): Audience[]; configApplied(applied: ConfigApplied['audiences']): Promise<void> },
    /** The ports the lab listens on besides the mock receivers': the collector's, the control API's. */
    private readonly ownedPorts: () => OwnedPort[],
  ) {}

  handlers() {
    return {
      getConfig: (): Config => this.current(),
      importConfig: async (config: Config) => {
        const warnings = await this.apply(config);
        this.deps.events.emit({ type: 'sources.changed' });
        this.deps.events.emit({ type: 'plans.changed' });
        this.deps.events.emit({ type: 'receivers.changed' });
        this.deps.events.emit({ type: 'settings.changed', settings: this.deps.store.settings.get() });
        return { ok: true as const, sources: config.sources.length, mockReceivers: config.mockReceivers.length, audiences: config.audiences.length, warnings };
      },
    };
  }

  /** Checked whole, then applied whole or refused with nothing changed (import-config.ts); one import at a time. */
  apply(config: Config): Promise<ConfigWarning[]> {
    const run = this.importing.then(async () => {
      // Its tracking plans compiled in check workers first (issue 38): applyConfig compiles none on the loop.
      await this.deps.plans.prepareConfig(config);
      if (this.stopped) throw stoppedImport();
      return this.applied(config, await importConfig(this.deps.store, this.deps.plans, config, this.deps.now(), this.receivers, undefined, () => this.stopped));
    });
    this.importing = run.catch(() => undefined);
    return run;
  }

  /** No import commits from now on (engine.stop, the control API closing without answering them). */
  stopImports(): void {
    this.stopped = true;
  }

  /** Once the import under way has ended (refused at its next slice after stopImports, its sources taken back). */
  async idle(): Promise<void> {
    await this.importing;
  }

  /**
   * What follows a committed import (also one applied at start, before the simulation ran): the
   * warnings are what it adjusted (mock receivers named) and what it doubts (URLs at another port of this machine).
   */
  async applied(config: Config, applied: ConfigApplied): Promise<ConfigWarning[]> {
    await cancelTurnedOff(applied, this.deps.cancelDeliveries);
    if (applied.receivers) this.receivers.reload();
    await this.audiences.configApplied(applied.audiences);
    const { http, https } = this.receivers.listenerPorts();
    const owned = [...this.ownedPorts(), { port: http, what: 'mock receivers' }, { port: https, what: 'mock receivers (https)' }];
    // Each a pass over every source: a turn of the loop between (a config may hold 10,000).
    const loopback = loopbackWarnings(config, owned, this.receivers.definitions());
    await new Promise((resolve) => setImmediate(resolve));
    return [...applied.warnings, ...loopback, ...actionsMappingWarnings(config)];
  }

  current(): Config {
    const { store } = this.deps;
    const sources = store.sources.list();
    const name = (id: string) => sources.find((s) => s.id === id)?.name ?? id;
    const { retrySchedule, ...settings } = store.settings.get();
    const { plans } = this.deps;
    // A URL that is one of this lab's mock receivers is written as its name (config-receivers.ts).
    const receivers = this.receivers.definitions().map((r) => ({ name: r.name, url: this.receivers.urlFor(r) }));
    return {
      version: CONFIG_VERSION,
      sources: sources.map((s) => {
        const plan = plans.connectionOf(s.id);
        const trackingPlan = plan && { name: plan.name, unplannedEvents: plan.unplannedEvents, unplannedProperties: plan.unplannedProperties, violations: plan.violations };
        return { name: s.name, writeKey: s.writeKey, webhooks: referToReceivers(s.webhooks, receivers), ...(s.collectorFaults ? { collectorFaults: s.collectorFaults } : {}), ...(trackingPlan ? { trackingPlan } : {}) };
      }),
      settings: { ...settings, retrySchedule: compactRetrySchedule(retrySchedule) },
      mockReceivers: this.receivers.definitions().map((r) => ({ ...r })),
      audiences: this.audiences.list().map((a) => ({
        name: a.name,
        type: a.type,
        ...(a.rule ? { rule: a.rule } : {}),
        ...(a.compute ? { compute: a.compute } : {}),
        sources: a.sourceIds.map(name),
        ...(a.syncIntervalMs ? { syncIntervalMs: a.syncIntervalMs } : {}),
      })),
      trackingPlans: plans.list().map((p) => ({ name: p.name, rules: p.rules })),
    };
  }
}
