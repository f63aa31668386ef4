import { afterEach } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestEngine, type TestEngine } from './engine';
import { startHttpsReceiver, startReceiver, type ReceiverHandler, type TestReceiver } from './receiver';
import type { TlsMaterial } from './tls';
import type { FastifyInstance } from 'fastify';
import type { BodyPool } from '../../src/main/server/body-pool';
import { startControlServer } from '../../src/main/server/control-server';

/**
 * What an integration test starts and must stop after it: a test engine (one at a time; starting
 * another stops the last, as a restart does), local receivers and data folders. Call it once at the
 * top of a test file: it registers the afterEach that cleans up. To restart in the same data, start
 * again with `dataDir: lab.dataDir()`: the folder is kept across the restart and removed after the test.
 */
export function testLab() {
  let engine: TestEngine | undefined;
  const receivers: TestReceiver[] = [];
  const servers: FastifyInstance[] = [];
  const dirs: string[] = [];
  const keep = (r: TestReceiver) => {
    receivers.push(r);
    return r;
  };
  afterEach(async () => {
    for (const app of servers.splice(0)) await app.close();
    await engine?.stop();
    engine = undefined;
    await Promise.all(receivers.splice(0).map((r) => r.close()));
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });
  return {
    async start(o: Parameters<typeof startTestEngine>[0] = {}): Promise<TestEngine> {
      await engine?.stop();
      engine = await startTestEngine(o);
      return engine;
    },
    async receiver(handler?: ReceiverHandler, port?: number): Promise<TestReceiver> {
      return keep(await startReceiver(handler, port));
    },
    /** The same over TLS with the given key/cert (see tls.ts for a self-signed one). */
    async httpsReceiver(tls: TlsMaterial, handler?: ReceiverHandler): Promise<TestReceiver> {
      return keep(await startHttpsReceiver(tls, handler));
    },
    /** The control API (HTTP, Bearer `token`) over an engine, closed after the test. */
    async controlServer(on: TestEngine, token: string, bodies?: BodyPool): Promise<{ app: FastifyInstance; url: string }> {
      const server = await startControlServer({ engine: on.engine, host: '127.0.0.1', port: 0, token, bodies });
      servers.push(server.app);
      return server;
    },
    /** A data folder kept across restarts within the test, removed after it. */
    dataDir(): string {
      const d = mkdtempSync(join(tmpdir(), 'wl-lab-'));
      dirs.push(d);
      return d;
    },
  };
}
