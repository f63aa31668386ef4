import Fastify, { type FastifyInstance, type FastifyRequest, type RouteOptions } from 'fastify';
import fastifyStatic from '@fastify/static';
import { existsSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { API_PREFIX } from '../../shared/http-mapping';
import type { Engine } from '../engine/engine.types';
import { closeConnectionsGracefully, fastifyServerOptions, HTTP_TIMEOUTS, type HttpTimeouts } from '../engine/http-timeouts';
import { registerApiRoutes, sendError } from './api-routes';
import { codedError } from '../engine/errors';
import { registerExportRoute } from './export-route';
import { hostAllowed, nonCanonicalTarget, originAllowed, tokenMatches } from './request-guard';
import { streamEvents } from './sse';
import { uiPolicyOf } from './ui-csp';
import { droppedKeyWarnings, keyProblems, scanKeys } from '../load-config';
import type { KeysDropped } from './api-routes';
import { inputTooDeep } from '../../shared/input-depth';
import { ValidationError } from '../../shared/validation-error';

export interface ControlServerOptions {
  engine: Engine;
  host: string;
  port: number;
  token: string;
  /** Built renderer (out/renderer); when missing, only the API is served. */
  staticDir?: string;
  /** Receiving limits (tests make them short); default HTTP_TIMEOUTS. */
  timeouts?: HttpTimeouts;
}

/** Web mode: the control API under /api (Bearer token, loopback only) and the renderer. */
export async function startControlServer(o: ControlServerOptions): Promise<{ app: FastifyInstance; url: string; port: number }> {
  const timeouts = fastifyServerOptions(o.timeouts ?? HTTP_TIMEOUTS, (error) => ({ error }));
  const app = Fastify({ logger: false, bodyLimit: 2 * 1024 * 1024, forceCloseConnections: true, ...timeouts });
  closeConnectionsGracefully(app.server);
  let port = o.port;

  // Deny by default: every route needs the token unless it was registered as public (the static UI),
  // decided on the route the router matched, never on the spelling of the URL.
  app.addHook('onRequest', async (req, reply) => {
    if (!hostAllowed(req.headers.host, port) || !originAllowed(req.headers.origin, port)) {
      return sendError(reply, codedError('forbidden', 'forbidden: the control API answers only same-origin requests to a loopback host'));
    }
    const problem = nonCanonicalTarget(req.raw.url ?? '');
    if (problem) return sendError(reply, codedError('invalid_input', `bad request target: ${problem}`));
    if (!isPublicRoute(req) && !tokenMatches(req.headers.authorization, o.token)) {
      return sendError(reply.header('www-authenticate', 'Bearer'), codedError('unauthorized', 'unauthorized: send Authorization: Bearer <token> (printed by webhook-lab serve)'));
    }
  });
  acceptEmptyJsonBodies(app);
  // Before any route: a route keeps the error handler in force when it was added.
  app.setErrorHandler(async (err, _req, reply) => sendError(reply, err));

  app.get(`${API_PREFIX}/events`, (req, reply) => streamEvents(o.engine, req, reply));
  registerApiRoutes(app, o.engine);
  registerExportRoute(app, o.engine);
  app.all(`${API_PREFIX}/*`, async (req, reply) => sendError(reply, codedError('not_found', `no such operation: ${req.method} ${req.url.split('?')[0]}`)));

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
 * A bodiless operation (DELETE, GET) sent with `Content-Type: application/json` is not an error. A
 * config posted to `/api/config` with a key given twice is refused naming it, as a config file is
 * (load-config.ts), instead of JSON.parse keeping the last one without a word.
 */
/**
 * A body's prototype keys, refused naming each; undefined when it has none (another fault) or when
 * it nests too deep to scan (the scanner recurses once per level): the parser's own refusal stands;
 * null when its only ones are in a mapping's data (taken).
 */
function protoKeys(body: string): ValidationError | undefined | null {
  let prototypes, dropped;
  try {
    ({ prototypes, dropped } = scanKeys(body));
  } catch {
    return undefined;
  }
  if (prototypes.length > 0) return new ValidationError(prototypes);
  // null: the only prototype keys are ones a mapping's data may hold.
  return dropped.length > 0 ? null : undefined;
}

function acceptEmptyJsonBodies(app: FastifyInstance): void {
  const json = app.getDefaultJsonParser('error', 'error');
  const configRoute = `${API_PREFIX}/config`;
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (req, body, done) => {
    if (body === '') return done(null, undefined);
    const isConfig = req.method === 'POST' && req.url.split('?')[0] === configRoute;
    return json(req, body as string, (err, parsed) => {
      // The parser refuses a prototype key as "not valid JSON": named, as a config file's is; one
      // inside a mapping's data only is taken (the schema drops it, as Segment's mapping kit does).
      if (err) {
        const refused = protoKeys(body as string);
        if (refused !== null) return done(refused ?? err);
        parsed = JSON.parse(body as string);
        (req as KeysDropped).droppedKeys = droppedKeyWarnings(body as string);
      }
      if (!isConfig) return done(null, parsed);
      // Too deep is refused by the operation's own input check; the key scan recurses once per level.
      const problems = inputTooDeep(parsed) ? [] : keyProblems(body as string);
      if (problems.length > 0) return done(new ValidationError(problems));
      done(null, parsed);
    });
  });
}
