import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Source } from '../../../shared/types';
import { analyticsNextAssets } from './analytics-next-assets';
import type { LibraryMetrics } from './library-metrics';

/** What the browser routes need from the engine. */
export interface BrowserRouteDeps {
  sources: { byWriteKey(key: string): Source | undefined };
  metrics: LibraryMetrics;
}

/** POST /v1/m bodies are a few hundred bytes (at most 20 counters); anything near this is not analytics.js. */
export const MAX_METRICS_BYTES = 64 * 1024;
const CORS = 'access-control-allow-origin';
const LOOPBACK_HOST = /^(?:localhost|127(?:\.\d{1,3}){3}|\[::1\])(?::\d{1,5})?$/i;

/**
 * What a web page running the real analytics.js (the standard snippet, or AnalyticsBrowser with a
 * cdnURL) asks of Segment's CDN and API besides the calls themselves: its settings, its code, and
 * its own metrics. Served by the collector so the page only swaps a host.
 */
export function registerBrowserRoutes(app: FastifyInstance, deps: BrowserRouteDeps): void {
  // The collector's own host:port, for settings read through a name that is not loopback (a Host
  // header is the client's word; only loopback names are taken from it).
  const ownHost = () => {
    const a = app.server.address();
    if (!a || typeof a === 'string') return '127.0.0.1';
    return `${a.family === 'IPv6' ? (a.address === '::1' ? '127.0.0.1' : `[${a.address}]`) : a.address}:${a.port}`;
  };
  const apiHostOf = (req: FastifyRequest) => {
    const host = req.headers.host;
    return host && LOOPBACK_HOST.test(host) ? host : ownHost();
  };

  app.get<{ Params: { writeKey: string } }>('/v1/projects/:writeKey/settings', async (req, reply) => {
    reply.header(CORS, '*').header('cache-control', 'no-store');
    const { writeKey } = req.params;
    // Any web page can read this answer (CORS is open for analytics.js): it names no source, not
    // even the key asked for. The keys are in the app (Client → Browser SDK), never here.
    if (!deps.sources.byWriteKey(writeKey)) return reply.code(404).send({ success: false, message: 'no source has this write key' });
    return cdnSettings(writeKey, `${apiHostOf(req)}/v1`, analyticsNextAssets()?.version ?? null);
  });

  app.get('/analytics.js/v1/:writeKey/analytics.min.js', async (_req, reply) => {
    const assets = analyticsNextAssets();
    if (!assets) return missingPackage(reply);
    return reply
      .header(CORS, '*')
      .header('cache-control', 'public, max-age=60')
      .type('application/javascript; charset=utf-8')
      .send(assets.standalone());
  });

  app.get<{ Params: { file: string } }>('/analytics-next/bundles/:file', async (req, reply) => {
    const assets = analyticsNextAssets();
    if (!assets) return missingPackage(reply);
    // Only a name listed in the package's dist/umd at start: `..`, encoded slashes and the like
    // are simply not in that list.
    const bytes = assets.file(req.params.file);
    if (!bytes) return reply.code(404).header(CORS, '*').send({ success: false, message: `no such analytics.js bundle: ${req.params.file}` });
    return reply
      .header(CORS, '*')
      // Chunk names carry a content hash: they never change.
      .header('cache-control', 'public, max-age=31536000, immutable')
      .type(req.params.file.endsWith('.map') ? 'application/json; charset=utf-8' : 'application/javascript; charset=utf-8')
      .send(bytes);
  });

  // analytics.js posts its own counters here (text/plain, no auth). Counted, never stored as a call.
  app.post(
    '/v1/m',
    {
      bodyLimit: MAX_METRICS_BYTES,
      // Any Content-Type, or none, is read as bytes (the collector's parser takes any media type).
      onRequest: (req, _reply, done) => {
        req.headers['content-type'] = 'application/octet-stream';
        done();
      },
      errorHandler: (err, _req, reply) => {
        const tooLarge = (err as { code?: string }).code === 'FST_ERR_CTP_BODY_TOO_LARGE';
        void reply
          .code(400)
          .header(CORS, '*')
          .send({ success: false, message: tooLarge ? `metrics body is larger than ${MAX_METRICS_BYTES} bytes (64 KB)` : err.message });
      },
    },
    async (req, reply) => {
      reply.header(CORS, '*');
      let body: unknown;
      try {
        body = JSON.parse((req.body as Buffer | undefined)?.toString('utf8') ?? '');
      } catch {
        return reply.code(400).send({ success: false, message: 'metrics body is not JSON' });
      }
      const res = deps.metrics.record(body);
      if ('error' in res) return reply.code(400).send({ success: false, message: res.error });
      return { success: true };
    },
  );
}

function missingPackage(reply: FastifyReply) {
  return reply.code(404).header(CORS, '*').send({ success: false, message: '@segment/analytics-next is not installed next to Webhook Lab' });
}

/**
 * Settings shaped like the CDN's (CDNSettings in analytics-next's src/browser/settings.ts): only the
 * Segment.io integration, pointed at this collector over http. No destinations run in the page.
 * `metrics.protocol` is not read by analytics.js 1.84 (only a page's own load option
 * integrations['Segment.io'].protocol sets it, https otherwise); it is here for versions that do.
 */
export function cdnSettings(writeKey: string, apiHost: string, libraryVersion: string | null) {
  const planDefault = { __default: { enabled: true, integrations: {} } };
  return {
    integrations: {
      'Segment.io': {
        apiKey: writeKey,
        apiHost,
        protocol: 'http',
        unbundledIntegrations: [],
        addBundledMetadata: true,
        maybeBundledConfigIds: {},
        versionSettings: { version: '4.4.7', componentTypes: ['browser'] },
      },
    },
    plan: { track: planDefault, identify: planDefault, group: planDefault },
    edgeFunction: {},
    analyticsNextEnabled: true,
    middlewareSettings: {},
    enabledMiddleware: {},
    metrics: { sampleRate: 0.1, host: apiHost, protocol: 'http' },
    legacyVideoPluginsEnabled: false,
    remotePlugins: [],
    // Not Segment's: says which analytics.js the lab serves, for a user reading this response.
    webhookLab: { analyticsNextVersion: libraryVersion },
  };
}
