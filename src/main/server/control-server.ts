import type { ServerResponse } from 'node:http';
import Fastify, { errorCodes, type FastifyInstance, type FastifyRequest, type RouteOptions } from 'fastify';
import fastifyStatic from '@fastify/static';
import { existsSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { API_PREFIX } from '../../shared/http-mapping';
import type { Engine } from '../engine/engine.types';
import { closeConnectionsGracefully, fastifyServerOptions, HTTP_TIMEOUTS, type HttpTimeouts } from '../engine/http-timeouts';
import { registerApiRoutes, sendError as sendApiError } from './api-routes';
import { codedError } from '../engine/errors';
import { registerExportRoute } from './export-route';
import { hostAllowed, nonCanonicalTarget, originAllowed, tokenMatches } from './request-guard';
import { streamEvents } from './sse';
import { uiPolicyOf } from './ui-csp';
import { opOf, type BodyChecked, type KeysDropped } from './api-routes';
import { ValidationError } from '../../shared/validation-error';
import { BodyPool } from './body-pool';
import { readJsonBody } from './op-body';
import { isMcpRequest, registerMcpRoute, sendMcpError } from './mcp-route';

export interface ControlServerOptions {
  engine: Engine;
  host: string;
  port: number;
  token: string;
  /** Built renderer (out/renderer); when missing, only the API is served. */
  staticDir?: string;
  /** Reads large bodies in a worker (default: a pool of its own, closed with the server). */
  bodies?: BodyPool;
  /** Where the server says what it could not do as planned (serve's stderr). */
  log?: (line: string) => void;
  /** Receiving limits (tests make them short); default HTTP_TIMEOUTS. */
  timeouts?: HttpTimeouts;
}

/** How long requests under way may take to finish once the server is closing (a config import of 10,000 sources: a few seconds). */
export const CLOSE_GRACE_MS = 15_000;

/** Web mode: the control API under /api (Bearer token, loopback only) and the renderer. */
export async function startControlServer(o: ControlServerOptions): Promise<{ app: FastifyInstance; url: string; port: number }> {
  const timeouts = fastifyServerOptions(o.timeouts ?? HTTP_TIMEOUTS, (error) => ({ error }));
  // Closing lets the requests under way finish (an import answers, then the lab stops); the event
  // streams, which never finish, are ended, and whatever still runs after CLOSE_GRACE_MS is cut.
  // Its own 503 while closing (below), in the API's error shape, not Fastify's.
  const app = Fastify({ logger: false, bodyLimit: 2 * 1024 * 1024, forceCloseConnections: false, return503OnClosing: false, ...timeouts });
  closeConnectionsGracefully(app.server);
  const streams = new Set<ServerResponse>();
  let grace: NodeJS.Timeout | undefined;
  let closing = false;
  app.addHook('preClose', async () => {
    closing = true;
    for (const res of streams) res.end();
    grace = setTimeout(() => {
      // Cut without an answer: nothing begun for them may commit after this (a config import).
      o.engine.abandonUnanswered();
      app.server.closeAllConnections();
    }, CLOSE_GRACE_MS).unref();
  });
  app.addHook('onClose', async () => clearTimeout(grace));
  // While closing, an answer closes its connection: a kept-alive one would hold the stop until the grace's cut.
  app.addHook('onSend', async (_req, reply) => {
    if (closing) reply.header('connection', 'close');
  });
  let port = o.port;

  // Deny by default: every route needs the token unless it was registered as public (the static UI),
  // decided on the route the router matched, never on the spelling of the URL.
  app.addHook('onRequest', async (req, reply) => {
    // /mcp's refusals in JSON-RPC's shape, which is what an MCP client reads.
    const sendError = isMcpRequest(req) ? sendMcpError : sendApiError;
    if (closing) return sendError(reply, codedError('unavailable', 'the lab is stopping: send this again once it has started'));
    if (!hostAllowed(req.headers.host, port) || !originAllowed(req.headers.origin, port)) {
      return sendError(reply, codedError('forbidden', 'forbidden: the control API answers only same-origin requests to a loopback host'));
    }
    const problem = nonCanonicalTarget(req.raw.url ?? '');
    if (problem) return sendError(reply, codedError('invalid_input', `bad request target: ${problem}`));
    if (!isPublicRoute(req) && !tokenMatches(req.headers.authorization, o.token)) {
      return sendError(reply.header('www-authenticate', 'Bearer'), codedError('unauthorized', 'unauthorized: send Authorization: Bearer <token> (printed by webhook-lab serve)'));
    }
  });
  const bodies = o.bodies ?? new BodyPool({ log: o.log });
  app.addHook('onClose', () => bodies.close());
  readJsonBodies(app, bodies);
  // Before any route: a route keeps the error handler in force when it was added.
  app.setErrorHandler(async (err, req, reply) => (isMcpRequest(req) ? sendMcpError(reply, err) : sendApiError(reply, err)));

  app.get(`${API_PREFIX}/events`, (req, reply) => streamEvents(o.engine, req, reply, streams));
  registerApiRoutes(app, o.engine);
  registerExportRoute(app, o.engine);
  // The MCP server (issue 39) behind the same token and Host/Origin checks (the onRequest hook above).
  registerMcpRoute(app, o.engine, o.token, () => `http://${o.host.includes(':') ? `[${o.host}]` : o.host}:${port}`);
  app.all(`${API_PREFIX}/*`, async (req, reply) => sendApiError(reply, codedError('not_found', `no such operation: ${req.method} ${req.url.split('?')[0]}`)));

  const staticDir = o.staticDir;
  if (staticDir && existsSync(staticDir)) {
    const policy = uiPolicyOf(join(staticDir, 'index.html'));
    await app.register(async (ui) => {
      ui.addHook('onRoute', markPublic);
      await ui.register(fastifyStatic, {
        root: staticDir,
        index: 'index.html',
        cacheControl: false,
        // Vite names everything it writes under assets/ by content hash: a browser may keep those
        // without asking again (a reload then starts from its cache and compiled code). The rest (the
        // HTML naming the current bundles) is checked on every load.
        setHeaders: (res, path) => {
          const hashed = relative(staticDir, path).startsWith(`assets${sep}`);
          res.setHeader('cache-control', hashed ? 'public, max-age=31536000, immutable' : 'no-cache');
        },
      });
    });
    // Strict CSP for the renderer in a browser, as in the desktop window.
    app.addHook('onSend', async (req, reply) => {
      if (isPublicRoute(req)) {
        reply.header('content-security-policy', policy());
        reply.header('x-content-type-options', 'nosniff');
        reply.header('referrer-policy', 'no-referrer');
      }
    });
  } else {
    app.get('/', { config: { public: true } }, async () => ({ service: 'Webhook Lab control API', note: 'the UI is not built: run npm run build' }));
  }

  await app.listen({ host: o.host, port: o.port });
  const address = app.server.address();
  port = typeof address === 'object' && address ? address.port : o.port;
  o.engine.servesApiOn(port);
  return { app, port, url: `http://${o.host.includes(':') ? `[${o.host}]` : o.host}:${port}` };
}

function markPublic(route: RouteOptions): void {
  route.config = { ...(route.config as object | undefined), public: true };
}

function isPublicRoute(req: FastifyRequest): boolean {
  return (req.routeOptions.config as { public?: boolean } | undefined)?.public === true;
}

/**
 * A bodiless operation (DELETE, GET) sent with `Content-Type: application/json` is not an error. An
 * operation's body is read by op-body.ts: on the loop when it is small, in a worker when it is large
 * (body-pool.ts), where its input is checked against the operation's schema too.
 */
function readJsonBodies(app: FastifyInstance, bodies: BodyPool): void {
  const configRoute = `${API_PREFIX}/config`;
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (req, body, done) => {
    const text = body as string;
    const isConfig = req.method === 'POST' && req.url.split('?')[0] === configRoute;
    const op = opOf(req);
    if (op && text.length > bodies.offloadBytes) {
      bodies.read({ op, text, isConfig, query: req.query, params: req.params }).then((read) => {
        if (!read.ok && 'invalidJson' in read) return done(new errorCodes.FST_ERR_CTP_INVALID_JSON_BODY(), undefined);
        if (!read.ok && 'unreadable' in read) return done(codedError('too_large', `the body is too large for the lab to read (${read.unreadable}): send fewer or smaller items`), undefined);
        (req as BodyChecked).checked = read;
        done(null, undefined);
      }, done);
      return;
    }
    const read = readJsonBody(text, isConfig);
    if (!read.ok) return done('invalidJson' in read ? new errorCodes.FST_ERR_CTP_INVALID_JSON_BODY() : new ValidationError(read.fields), undefined);
    if (read.droppedKeys) (req as KeysDropped).droppedKeys = read.droppedKeys;
    done(null, read.body);
  });
}
