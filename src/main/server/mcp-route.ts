import { randomUUID } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { Engine } from '../engine/engine.types';
import { inProcessApi } from '../testing/transport';
import { createLabMcpServer } from '../mcp/server';

// The MCP server over Streamable HTTP at /mcp (issue 39), on the control API's server: the onRequest
// hook of control-server.ts guards it as it guards /api (the bearer token: 401 without it; the Host
// and Origin checks the MCP specification asks for against DNS rebinding: 403), so nothing here
// checks them again. One MCP server and transport per session (the SDK's stateful mode: progress
// notifications and server-sent streams belong to a session); secrets are always masked here.

export const MCP_PATH = '/mcp';
/** Sessions kept at once: a client that never ends its session (DELETE) is forgotten, oldest first. */
const MAX_SESSIONS = 32;

interface Session {
  transport: StreamableHTTPServerTransport;
  server: McpServer;
}

const jsonRpcError = (reply: FastifyReply, status: number, message: string) =>
  reply.code(status).header('content-type', 'application/json').send({ jsonrpc: '2.0', error: { code: -32000, message }, id: null });

export function registerMcpRoute(app: FastifyInstance, engine: Engine, token: string, base: () => string): void {
  const sessions = new Map<string, Session>();
  const ops = inProcessApi(engine.handlers);

  const end = async (id: string) => {
    const s = sessions.get(id);
    if (!s) return;
    sessions.delete(id);
    await s.server.close().catch(() => undefined);
  };
  // Before the server waits for requests under way: a session's streams never finish by themselves.
  app.addHook('preClose', async () => {
    await Promise.all([...sessions.keys()].map(end));
  });

  const handle = async (req: FastifyRequest, reply: FastifyReply) => {
    const id = req.headers['mcp-session-id'];
    const sessionId = typeof id === 'string' ? id : undefined;
    let session = sessionId === undefined ? undefined : sessions.get(sessionId);
    if (sessionId !== undefined && !session) return jsonRpcError(reply, 404, 'no such MCP session (it ended, or the lab restarted): initialize again');
    if (!session) {
      if (req.method !== 'POST' || !isInitializeRequest(req.body)) return jsonRpcError(reply, 400, 'no Mcp-Session-Id: begin with an initialize request');
      const server = createLabMcpServer({ ops, showSecrets: false, token, uiBase: base() });
      const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (sid) => {
          sessions.set(sid, { transport, server });
          while (sessions.size > MAX_SESSIONS) void end(sessions.keys().next().value!).catch(() => undefined);
        },
        onsessionclosed: (sid) => void end(sid).catch(() => undefined),
      });
      transport.onclose = () => {
        if (transport.sessionId) sessions.delete(transport.sessionId);
      };
      await server.connect(transport);
      session = { transport, server };
    }
    // The transport writes the answer itself (JSON, or a stream of server-sent events).
    reply.hijack();
    await session.transport.handleRequest(req.raw, reply.raw, req.body);
  };

  app.route({ method: ['GET', 'POST', 'DELETE'], url: MCP_PATH, handler: handle });
}
