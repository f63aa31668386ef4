import { randomUUID } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { Engine } from '../engine/engine.types';
import { errorAnswer } from '../engine/errors';
import { inProcessApi } from '../testing/transport';
import { loadOnce } from '../../shared/load-once';

// The MCP server over Streamable HTTP at /mcp (issue 39), on the control API's server: the onRequest
// hook of control-server.ts guards it as it guards /api (the bearer token: 401 without it; the Host
// and Origin checks the MCP specification asks for against DNS rebinding: 403), so nothing here
// checks them again. One MCP server and transport per session (the SDK's stateful mode: progress
// notifications and server-sent streams belong to a session); secrets are always masked here.

export const MCP_PATH = '/mcp';
/** Sessions kept at once: past it, the session unused longest with no tool call (POST) under way is forgotten. */
const MAX_SESSIONS = 32;

/** How long a stop waits for the answers of tool calls under way (they answer at once that the lab is stopping). */
const ANSWER_GRACE_MS = 2_000;

/** JSON-RPC's own codes: a body that is not JSON; everything else is the SDK's "server error". */
const PARSE_ERROR = -32700;
const SERVER_ERROR = -32000;

interface Session {
  transport: StreamableHTTPServerTransport;
  server: McpServer;
  /**
   * Its POSTs still being answered (a tool call under way). A GET stream does not count: the SDK's
   * client keeps one open for as long as it is connected, so 32 idle agents locked every new one
   * out (found by a review); an idle session is forgotten, and its client initializes again.
   */
  open: number;
}

const jsonRpcError = (reply: FastifyReply, status: number, message: string, code = SERVER_ERROR) =>
  reply.code(status).header('content-type', 'application/json').send({ jsonrpc: '2.0', error: { code, message }, id: null });

/**
 * The MCP SDK and the lab's MCP server, loaded by the first /mcp request: they are a sixth of a
 * start's module loading, and most labs never serve an agent.
 */
const mcp = loadOnce(() =>
  Promise.all([import('@modelcontextprotocol/sdk/server/streamableHttp.js'), import('@modelcontextprotocol/sdk/types.js'), import('../mcp/server')]).then(
    ([transport, types, server]) => ({
      Transport: transport.StreamableHTTPServerTransport,
      isInitializeRequest: types.isInitializeRequest,
      createLabMcpServer: server.createLabMcpServer,
    }),
  ),
);

export const isMcpRequest = (req: FastifyRequest) => (req.raw.url ?? '').split('?')[0] === MCP_PATH;

/**
 * An /mcp request refused before it reached the transport (no token, another Origin, a body that is
 * not JSON, another media type): the status the control API gives it, in JSON-RPC's shape, which is
 * what an MCP client reads; a body that is not JSON is JSON-RPC's parse error.
 */
export function sendMcpError(reply: FastifyReply, err: unknown): FastifyReply {
  const { status, body } = errorAnswer(err);
  const code = (err as { code?: unknown }).code;
  const parse = code === 'FST_ERR_CTP_INVALID_JSON_BODY' || code === 'FST_ERR_CTP_EMPTY_JSON_BODY';
  return jsonRpcError(reply, status, parse ? `Parse error: ${body.error}` : body.error, parse ? PARSE_ERROR : SERVER_ERROR);
}

export function registerMcpRoute(app: FastifyInstance, engine: Engine, token: string, base: () => string): void {
  // In the order of their last use, oldest first.
  const sessions = new Map<string, Session>();
  const ops = inProcessApi(engine.handlers);

  const end = async (id: string) => {
    const s = sessions.get(id);
    if (!s) return;
    sessions.delete(id);
    await s.server.close().catch(() => undefined);
  };
  /** Room for one more session: the idle one unused longest goes; false when every session is busy. */
  const makeRoom = (): boolean => {
    if (sessions.size < MAX_SESSIONS) return true;
    for (const [id, s] of sessions) {
      if (s.open > 0) continue;
      void end(id).catch(() => undefined);
      return true;
    }
    return false;
  };
  // The lab stopping: tool calls under way answer so (tool-kit.ts guarded), and those answers are
  // let out (a moment at most) before the sessions end; their streams never finish by themselves.
  const stopping = new AbortController();
  let posts = 0;
  app.addHook('preClose', async () => {
    stopping.abort();
    const until = Date.now() + ANSWER_GRACE_MS;
    while (posts > 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 10));
    await Promise.all([...sessions.keys()].map(end));
  });

  const handle = async (req: FastifyRequest, reply: FastifyReply) => {
    // Fastify reads text/plain too: the transport would refuse it, but only once a session exists.
    if (req.method === 'POST' && !/^application\/json\b/i.test(req.headers['content-type'] ?? '')) return jsonRpcError(reply, 415, 'Unsupported Media Type: Content-Type must be application/json');
    if (req.method === 'POST' && req.body === undefined) return jsonRpcError(reply, 400, 'Parse error: the body is empty; send a JSON-RPC message', PARSE_ERROR);
    const id = req.headers['mcp-session-id'];
    const sessionId = typeof id === 'string' ? id : undefined;
    let session = sessionId === undefined ? undefined : sessions.get(sessionId);
    if (sessionId !== undefined && !session) return jsonRpcError(reply, 404, 'no such MCP session (it ended, or the lab restarted): initialize again');
    if (session) {
      sessions.delete(sessionId!);
      sessions.set(sessionId!, session);
    } else {
      // Refused without the SDK when it can be: only an initialize POST needs it to be judged.
      if (req.method !== 'POST') return jsonRpcError(reply, 400, 'no Mcp-Session-Id: begin with an initialize request');
      if (stopping.signal.aborted) return jsonRpcError(reply, 503, 'the lab is stopping');
      const { Transport, isInitializeRequest, createLabMcpServer } = await mcp.get();
      // The lab began stopping while the SDK loaded: its sessions are ended, so none is begun.
      if (stopping.signal.aborted) return jsonRpcError(reply, 503, 'the lab is stopping');
      if (!isInitializeRequest(req.body)) return jsonRpcError(reply, 400, 'no Mcp-Session-Id: begin with an initialize request');
      if (!makeRoom()) {
        return jsonRpcError(reply.header('retry-after', '5'), 503, `${MAX_SESSIONS} MCP sessions have a tool call under way: try again once one is answered`);
      }
      const server = createLabMcpServer({ ops, showSecrets: false, token, uiBase: base(), stopping: stopping.signal });
      const fresh: Session = { transport: undefined as unknown as StreamableHTTPServerTransport, server, open: 0 };
      fresh.transport = new Transport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (sid) => {
          makeRoom();
          sessions.set(sid, fresh);
        },
        onsessionclosed: (sid) => void end(sid).catch(() => undefined),
      });
      fresh.transport.onclose = () => {
        if (fresh.transport.sessionId) sessions.delete(fresh.transport.sessionId);
      };
      await server.connect(fresh.transport);
      if (stopping.signal.aborted) {
        await server.close().catch(() => undefined);
        return jsonRpcError(reply, 503, 'the lab is stopping');
      }
      session = fresh;
    }
    const s = session;
    if (req.method === 'POST') {
      s.open += 1;
      posts += 1;
      reply.raw.once('close', () => {
        s.open -= 1;
        posts -= 1;
      });
    }
    // The transport writes the answer itself (JSON, or a stream of server-sent events).
    reply.hijack();
    await s.transport.handleRequest(req.raw, reply.raw, req.body);
  };

  app.route({ method: ['GET', 'POST', 'DELETE'], url: MCP_PATH, handler: handle });
  // Any other method: JSON-RPC's shape too, not the router's "Route PUT:/mcp not found" (found by a review).
  app.route({ method: ['PUT', 'PATCH'], url: MCP_PATH, handler: (req, reply) => jsonRpcError(reply.header('allow', 'GET, POST, DELETE'), 405, `Method Not Allowed: ${req.method}; /mcp takes POST, GET (a stream) and DELETE (end a session)`) });
}
