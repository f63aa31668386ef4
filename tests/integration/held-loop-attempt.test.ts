import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { HttpSender } from '../../src/main/engine/dispatcher/http-sender';
import { until } from '../helpers/until';

// Issue 44: on a slow or busy machine the event loop can be held past an attempt's deadline while
// the receiver's answer (or a refusal) already waits in the socket. Timers run before the loop reads
// its sockets, so the attempt used to be recorded as timed out although the answer came in time.
// The receiver here is another process, so it answers while this one is held; the loop is held
// until that answer has been written and the deadline has passed, whatever the machine's speed.

const RECEIVER = `
const http = require('node:http');
const fs = require('node:fs');
const [marker] = process.argv.slice(1);
const s = http.createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    fs.writeFileSync(marker + '.got', 'got');
    // Long enough for the test to start holding its loop first; well inside its deadline.
    setTimeout(() => res.end('ok', () => fs.writeFileSync(marker, 'answered')), 500);
  });
});
s.listen(0, '127.0.0.1', () => process.stdout.write(String(s.address().port) + '\\n'));
`;

let dir: string;
let child: ChildProcess;
let port: number;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'webhook-lab-held-'));
  child = spawn(process.execPath, ['-e', RECEIVER, join(dir, 'answered')], { stdio: ['ignore', 'pipe', 'inherit'] });
  port = await new Promise<number>((resolve, reject) => {
    child.stdout!.once('data', (d: Buffer) => resolve(Number(d.toString().trim())));
    child.once('exit', (code) => reject(new Error(`receiver exited ${code}`)));
  });
});
afterAll(() => {
  child?.kill();
  rmSync(dir, { recursive: true, force: true });
});

/** Holds the loop until `done()` and at least `ms` from now; bounded at 60 s so a broken setup fails, not hangs. */
function holdLoop(ms: number, done: () => boolean): void {
  const start = performance.now();
  while (!(done() && performance.now() - start > ms)) {
    if (performance.now() - start > 60_000) throw new Error('the receiver never answered');
  }
}

it('an answer that arrived before the deadline, read after it because the loop was held, is the answer', async () => {
  const sender = new HttpSender();
  try {
    const timeoutMs = 2000;
    const t0 = performance.now();
    const sent = sender.send({ url: `http://127.0.0.1:${port}/hook`, headers: { 'content-type': 'application/json' }, body: Buffer.from('{}'), timeoutMs });
    // Once the receiver has the request (a file it writes), hold the loop until it has answered (a
    // file it writes after the answer's last byte) and the deadline has passed.
    await until(() => existsSync(join(dir, 'answered.got')), 60_000);
    // Held from the loop's check phase, as a long task is: the next turn starts with its timers.
    await new Promise<void>((resolve) => setImmediate(resolve));
    holdLoop(timeoutMs - (performance.now() - t0) + 50, () => existsSync(join(dir, 'answered')));
    const r = await sent;
    expect(r.timedOut).toBe(false);
    expect(r.errorCode).toBeNull();
    expect(r.status).toBe(200);
    expect(r.responseBody).toBe('ok');
  } finally {
    await sender.close({ force: true });
  }
});
