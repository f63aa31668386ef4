import Fastify, { type FastifyInstance, type FastifyError, type FastifyReply, type FastifyRequest } from 'fastify';
import type { IncomingMessage } from 'node:http';
import type { CallType } from '../../../shared/types';
import { MAX_BATCH_BYTES, MAX_CALL_BYTES } from '../../../shared/limits';
import type { Ingest } from './ingest';
import { registerBrowserRoutes, type BrowserRouteDeps } from './browser-routes';
import { closeConnectionsGracefully, fastifyServerOptions, HTTP_TIMEOUTS, type HttpTimeouts } from '../http-timeouts';
import { FaultReplies } from './fault-replies';
import { CallFastPath } from './call-fast-path';
import { bodyTooLarge } from './content-encoding';

// Every route of SPEC §3, with the short aliases the official SDKs use.
const SINGLE_ROUTES: Record<string, CallType> = {
  identify: 'identify', i: 'identify',
  track: 'track', t: 'track',
  page: 'page', p: 'page',
  screen: 'screen', s: 'screen',
  group: 'group', g: 'group',
  alias: 'alias', a: 'alias',
};
const BATCH_ROUTES = ['batch', 'import', 'b'];
const OK_TEXT = '{"success":true}';
const JSON_TYPE = 'application/json; charset=utf-8';

// Fastify refuses a Content-Type it cannot parse as a media type (`json`, `text`) with 415 before any
// parser runs. The body is JSON whatever the header says, so such a header is set aside (kept for the
// stored request) and replaced by one Fastify accepts. A callback hook: it runs on every call.
const MEDIA_TYPE = /^[\w!#$%&'*+.^`|~-]+\/[\w!#$%&'*+.^`|~-]+\s*(?:;|$)/;
const sentContentTypes = new WeakMap<IncomingMessage, string>();
function acceptAnyContentType(req: FastifyRequest, _reply: FastifyReply, done: () => void): void {
  const ct = req.headers['content-type'];
  if (ct !== undefined && !MEDIA_TYPE.test(ct)) {
    sentContentTypes.set(req.raw, ct);
    req.headers['content-type'] = 'application/octet-stream';
  }
  done();
}

export async function startCollector(
  ingest: Ingest,
  opts: { host: string; port: number; browser?: BrowserRouteDeps; timeouts?: HttpTimeouts },
): Promise<{ app: FastifyInstance; url: string }> {
  const errorBody = (message: string) => ({ success: false, message });
  const app = Fastify({ logger: false, bodyLimit: MAX_BATCH_BYTES, return503OnClosing: true, ...fastifyServerOptions(opts.timeouts ?? HTTP_TIMEOUTS, errorBody) });
  closeConnectionsGracefully(app.server);
  const faults = new FaultReplies();
  // Most calls (a POST with a Content-Length) are read there, without Fastify's request cycle.
  const fast = new CallFastPath(ingest, faults);
  fast.install(app.server);
  // Hung requests never finish on their own: closing the collector must not wait for them.
  app.addHook('preClose', (done) => {
    fast.close();
    faults.closeAll();
    ingest.endDelays();
    done();
  });

  // JSON whatever the Content-Type (analytics.js sends text/plain): take the raw bytes, parse ourselves.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (_req, body, done) => done(null, body));

  // Browsers (analytics.js) post cross-origin. Set per reply rather than in a hook: a hook costs
  // every request a few percent of the collector's throughput.
  app.options('/v1/*', async (_req, reply) => {
    reply
      .header('access-control-allow-origin', '*')
      .header('access-control-allow-methods', 'POST, OPTIONS')
      .header('access-control-allow-headers', 'authorization, content-type, content-encoding')
      .header('access-control-max-age', '86400')
      .code(204)
      .send();
  });

  const route = (path: string, type: CallType | 'batch', bodyLimit: number) =>
    app.post(path, { bodyLimit, onRequest: acceptAnyContentType }, async (req, reply) => {
      const res = await ingest.handle({
        path,
        route: type,
        authorization: req.headers.authorization,
        contentType: sentContentTypes.get(req.raw) ?? req.headers['content-type'],
        contentEncoding: req.headers['content-encoding'],
        userAgent: req.headers['user-agent'],
        body: req.body as Buffer | undefined,
      });
      if (res.fault) return faults.answer(req, reply, res.fault, res.body);
      reply.code(res.status).header('access-control-allow-origin', '*');
      if (res.retryAfter !== undefined) reply.header('retry-after', String(res.retryAfter));
      if (res.acceptEncoding !== undefined) reply.header('accept-encoding', res.acceptEncoding);
      // The common answer is a constant: skip serializing it for every call.
      return res.status === 200 && res.body.success ? reply.type(JSON_TYPE).send(OK_TEXT) : reply.send(res.body);
    });
  // A single call's limit is 32 KB; Fastify refuses more before reading it all, mapped to 400 below.
  for (const [name, type] of Object.entries(SINGLE_ROUTES)) {
    route(`/v1/${name}`, type, MAX_CALL_BYTES);
    fast.add({ path: `/v1/${name}`, type, bodyLimit: MAX_CALL_BYTES });
  }
  for (const name of BATCH_ROUTES) {
    route(`/v1/${name}`, 'batch', MAX_BATCH_BYTES);
    fast.add({ path: `/v1/${name}`, type: 'batch', bodyLimit: MAX_BATCH_BYTES });
  }

  // The web-page flow (settings, analytics.js and its chunks, POST /v1/m): browser-routes.ts.
  if (opts.browser) registerBrowserRoutes(app, opts.browser);

  app.get('/', async () => ({ service: 'Webhook Lab collector', routes: '/v1/{identify,track,page,screen,group,alias,batch,import}' }));

  app.setNotFoundHandler(async (req, reply) =>
    reply.code(404).header('access-control-allow-origin', '*').send({ success: false, message: `no such route: ${req.method} ${req.url.split('?')[0]}` }),
  );
  app.setErrorHandler(async (err: FastifyError, req, reply) => {
    reply.header('access-control-allow-origin', '*');
    if (err.code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
      const batch = BATCH_ROUTES.some((r) => req.url.startsWith(`/v1/${r}`));
      return reply.code(400).send({ success: false, message: bodyTooLarge(batch) });
    }
    if (err.statusCode && err.statusCode < 500) return reply.code(400).send({ success: false, message: err.message });
    // Never a crash and never silent loss: a 5xx tells the client to retry.
    return reply.code(500).send({ success: false, message: `internal error: ${err.message}` });
  });

  const address = await app.listen({ host: opts.host, port: opts.port });
  return { app, url: address.replace('[::1]', '127.0.0.1') };
}
