// The baseline: a bare Node http server that reads each request and answers 200 {"success":true}
// without parsing or storing anything. The collector's figures are ratios against this one.
import { createServer } from 'node:http';

const BODY = Buffer.from('{"success":true}');

const server = createServer((req, res) => {
  req.on('data', () => {});
  req.on('end', () => {
    res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': BODY.length });
    res.end(BODY);
  });
});
server.keepAliveTimeout = 10_000;
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`listening: http://127.0.0.1:${server.address().port}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
