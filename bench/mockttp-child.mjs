// mockttp (HTTP Toolkit's mock server library), in a child process of its own for the receivers
// comparison: one rule answering POST /hook with the same fixed 200 as the others, defaults otherwise.
//   node bench/mockttp-child.mjs '<body>'   → prints "listening: <url>"
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const mockttp = require('mockttp');
const server = mockttp.getLocal();
await server.start();
const body = process.argv[2];
// Given headers are sent exactly as given (no framing added): Content-Length must be among them, or
// the answer has no end on a kept-alive connection.
await server.forPost('/hook').thenReply(200, body, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) });
process.stdout.write(`listening: ${server.url}\n`);
process.on('SIGTERM', () => void server.stop().then(() => process.exit(0)));
