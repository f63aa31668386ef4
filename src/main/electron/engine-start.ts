import { createServer } from 'node:net';
import type { Engine, EngineOptions } from '../engine/engine.types';

// Starting the engine for the desktop app: the collector wants 127.0.0.1:8787, but a second tool
// (or a `webhook-lab serve` left running) may hold it; then the app still opens, on a free port,
// and tells the user which URL to point their senders at. No electron import: testable in Node.

export function isAddressInUse(err: unknown): boolean {
  for (let e = err as { code?: unknown; cause?: unknown; message?: unknown } | undefined, depth = 0; e && depth < 5; depth++) {
    if (e.code === 'EADDRINUSE' || (typeof e.message === 'string' && e.message.includes('EADDRINUSE'))) return true;
    e = e.cause as typeof e;
  }
  return false;
}

/** Whether host:port can be bound right now (a probe: the real bind can still race). */
export function portIsFree(port: number, host = '127.0.0.1'): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once('error', () => resolve(false));
    probe.listen({ port, host, exclusive: true }, () => probe.close(() => resolve(true)));
  });
}

export interface StartedEngine {
  engine: Engine;
  /** Set when the wanted port was busy and a free one was used instead; say it to the user. */
  portNotice?: string;
}

export async function startEngineWithPortFallback(
  start: (opts: EngineOptions) => Promise<Engine>,
  opts: EngineOptions & { collectorPort: number },
  allowFallback: boolean,
): Promise<StartedEngine> {
  const wanted = opts.collectorPort;
  const host = opts.collectorHost ?? '127.0.0.1';
  const busy = (engine: Engine) =>
    `Port ${wanted} is already in use, so the collector listens on ${engine.collectorUrl} instead. ` +
    `Point your senders there, or free port ${wanted} and restart Webhook Lab.`;

  if (allowFallback && wanted !== 0 && !(await portIsFree(wanted, host))) {
    const engine = await start({ ...opts, collectorPort: 0 });
    return { engine, portNotice: busy(engine) };
  }
  try {
    return { engine: await start(opts) };
  } catch (err) {
    // Lost the race between the probe and the bind.
    if (!allowFallback || wanted === 0 || !isAddressInUse(err)) throw err;
    const engine = await start({ ...opts, collectorPort: 0 });
    return { engine, portNotice: busy(engine) };
  }
}
