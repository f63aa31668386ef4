// One saturation run (saturate in lib/load.mjs) in a fresh process of its own:
//   node bench/saturate-child.mjs '{"url":…,"connections":…,"duration":…,"headers":{…},"body":{"kind":"track"|"batch","prefix":"s","size":100},"acks":true}'
// Like the enqueue child: the bench process also runs the receiver and holds the durability checks'
// bookkeeping (hundreds of thousands of entries); a generator sharing it sent more slowly and left
// the engine idle between requests (measured: 45,000 batch events/s against 54,000-60,000).
// Prints one JSON line: the result, the n of every 2xx answer when asked, and the CPU seconds the run took.
import { saturate } from './lib/load.mjs';
import { batchBody, trackBody } from './lib/bodies.mjs';

const spec = JSON.parse(process.argv[2]);
const { kind, prefix, size } = spec.body;
const makeBody = kind === 'batch' ? (n) => batchBody(`${prefix}-${n}`, size) : (n) => trackBody(`${prefix}-${n}`);
const acks = [];
const cpu0 = process.cpuUsage();
const r = await saturate({ url: spec.url, connections: spec.connections, duration: spec.duration, headers: spec.headers, makeBody, onAck: spec.acks ? (n) => acks.push(n) : undefined });
const cpu = process.cpuUsage(cpu0);
process.stdout.write(`${JSON.stringify({ ...r, acks, cpuSeconds: (cpu.user + cpu.system) / 1e6 })}\n`);
