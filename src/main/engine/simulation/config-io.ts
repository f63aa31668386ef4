import { trackingPlansOf } from '../tracking-plans/service';
import type { Config } from '../../../shared/config.schema';
import type { Audience } from '../../../shared/simulation.contract';
import { applyConfig, cancelTurnedOff, type ConfigApplied } from '../apply-config';
import type { Feature, SimulationDeps } from './simulation-deps';
import type { ReceiversService } from './receivers-service';

type Ops = 'getConfig' | 'importConfig';

/** Export the whole setup as a config file, and import one (idempotent, as at start). */
export class ConfigIo implements Feature<Ops> {
  constructor(
    private readonly deps: SimulationDeps,
    private readonly receivers: ReceiversService,
    private readonly audiences: { list(): Audience[]; configApplied(applied: ConfigApplied['audiences']): Promise<void> },
  ) {}

  handlers() {
    return {
      getConfig: (): Config => this.current(),
      importConfig: async (config: Config) => {
        await this.apply(config);
        this.deps.events.emit({ type: 'sources.changed' });
        this.deps.events.emit({ type: 'receivers.changed' });
        this.deps.events.emit({ type: 'settings.changed', settings: this.deps.store.settings.get() });
        return { ok: true as const, sources: config.sources.length, mockReceivers: config.mockReceivers.length, audiences: config.audiences.length };
      },
    };
  }

  /** Checked whole, then applied in one transaction or refused with nothing changed (apply-config.ts). */
  async apply(config: Config): Promise<void> {
    await this.applied(applyConfig(this.deps.store, config, this.deps.now()));
  }

  /** What follows a committed import (also one applied at start, before the simulation ran). */
  async applied(applied: ConfigApplied): Promise<void> {
    await cancelTurnedOff(applied, this.deps.cancelDeliveries);
    if (applied.receivers) this.receivers.reload();
    await this.audiences.configApplied(applied.audiences);
  }

  current(): Config {
    const { store } = this.deps;
    const sources = store.sources.list();
    const name = (id: string) => sources.find((s) => s.id === id)?.name ?? id;
    const { retrySchedule, ...settings } = store.settings.get();
    const plans = trackingPlansOf(store);
    return {
      sources: sources.map((s) => {
        const plan = plans.connectionOf(s.id);
        const trackingPlan = plan && { name: plan.name, unplannedEvents: plan.unplannedEvents, unplannedProperties: plan.unplannedProperties, violations: plan.violations };
        return { name: s.name, writeKey: s.writeKey, webhooks: s.webhooks, ...(s.collectorFaults ? { collectorFaults: s.collectorFaults } : {}), ...(trackingPlan ? { trackingPlan } : {}) };
      }),
      settings: { ...settings, retrySchedule: { ...retrySchedule } },
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
