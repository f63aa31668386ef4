import type { ApiHandlers, OpParsed } from '../../../shared/api.contract';
import type { simulationOps } from '../../../shared/simulation.contract';
import type { ConfigApplied } from '../apply-config';
import type { Config, ConfigWarning } from '../../../shared/config.schema';
import type { SimulationDeps } from './simulation-deps';
import { ReceiversService } from './receivers-service';
import { Deletions } from './deletions';
import { Audiences } from './audiences/audience-service';
import { LoadGenerator } from './load-generator';
import { Exporter, type ExportStream } from './export';
import { ConfigIo } from './config-io';
import type { OwnedPort } from '../config-receivers';

export type SimulationHandlers = Pick<ApiHandlers, keyof typeof simulationOps>;

export interface Simulation {
  handlers: SimulationHandlers;
  /** What follows a config applied at start, before the simulation ran (canceling, first audience syncs); its warnings. */
  configApplied(config: Config, applied: ConfigApplied): Promise<ConfigWarning[]>;
  /** exportDeliveries as a stream of text, for GET /api/export/file. */
  openExport(input: OpParsed<'exportDeliveries'>): ExportStream;
  /** Config imports under way or waiting are not committed from now on. */
  stopImports(): void;
  stop(): Promise<void>;
}

/** Mock receivers, deletions, audiences, load and export (SPEC §6–§7), started with the engine. */
export async function startSimulation(
  deps: SimulationDeps,
  opts: { receiverPorts?: { http: number; https: number }; receivers?: ReceiversService; ownedPorts?: () => OwnedPort[] } = {},
): Promise<Simulation> {
  // The engine opens the receivers' listeners before a config file at start is applied (their URLs).
  const receivers = opts.receivers ?? new ReceiversService(deps, opts.receiverPorts);
  const deletions = new Deletions(deps);
  const audiences = new Audiences(deps);
  const load = new LoadGenerator(deps);
  const exporter = new Exporter(deps);
  const configIo = new ConfigIo(deps, receivers, audiences, opts.ownedPorts ?? (() => []));
  await receivers.start();
  await audiences.start();
  return {
    handlers: {
      ...receivers.handlers(),
      ...deletions.handlers(),
      ...audiences.handlers(),
      ...load.handlers(),
      ...exporter.handlers(),
      ...configIo.handlers(),
    },
    configApplied: (config, applied) => configIo.applied(config, applied),
    openExport: (input) => exporter.open(input),
    stopImports: () => configIo.stopImports(),
    stop: async () => {
      exporter.stop();
      await configIo.idle();
      await load.stop();
      await audiences.stop();
      await receivers.stop();
    },
  };
}
