import type { ServerResponse } from 'node:http';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { EngineEvent } from '../../shared/api.contract';
import { coalesce } from '../../shared/coalesce';
import type { Engine } from '../engine/engine.types';

const FLUSH_MS = 100;
const HEARTBEAT_MS = 15_000;

/**
 * Server-Sent Events: each message's data is a JSON array of engine events, gathered for up to
 * 100 ms, so a client sees a handful of messages a second however busy the engine is.
 */
export function streamEvents(engine: Engine, req: FastifyRequest, reply: FastifyReply, open: Set<ServerResponse>): void {
  reply.hijack();
  const res = reply.raw;
  open.add(res);
  res.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache, no-transform',
    connection: 'keep-alive',
    'x-accel-buffering': 'no',
  });
  res.write(': connected\n\n');
  const pending = coalesce<EngineEvent>({ maxWaitMs: FLUSH_MS, flush: (batch) => res.write(`data: ${JSON.stringify(batch)}\n\n`) });
  const unsubscribe = engine.onEvents((events) => pending.pushAll(events));
  const heartbeat = setInterval(() => res.write(': ping\n\n'), HEARTBEAT_MS);
  const close = () => {
    open.delete(res);
    unsubscribe();
    clearInterval(heartbeat);
    pending.dispose();
  };
  req.raw.on('close', close);
  res.on('error', close);
}
