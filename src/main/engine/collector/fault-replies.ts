import type { Socket } from 'node:net';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { HANG_MAX_MS } from '../../../shared/collector-faults';
import type { FaultDecision } from './fault-injector';

/**
 * How the collector's HTTP side carries out a fault the ingest drew (README, Decisions, "Collector
 * faults"). The server's timeouts (http-timeouts.ts) bound receiving a request only, so a hang would
 * otherwise last as long as the client waits: it is closed, unanswered, after HANG_MAX_MS.
 */
export class FaultReplies {
  private readonly hung = new Set<Socket>();

  answer(req: FastifyRequest, reply: FastifyReply, fault: FaultDecision, body: unknown): FastifyReply {
    if (fault.mode === 'status') {
      reply.code(fault.status).header('access-control-allow-origin', '*');
      if (fault.retryAfterS !== undefined) reply.header('retry-after', String(fault.retryAfterS));
      return reply.send(body);
    }
    reply.hijack();
    this.cut(req.raw.socket, fault.mode);
    return reply;
  }

  /** A reset or a hang on the request's connection (the call fast path's way, and the route's). */
  cut(socket: Socket, mode: Exclude<FaultDecision['mode'], 'status'>): void {
    if (mode === 'reset') {
      // A TCP RST: the client sees ECONNRESET.
      socket.resetAndDestroy();
      return;
    }
    // hang: nothing is ever written; the connection ends when the client gives up, at HANG_MAX_MS, or
    // when the collector stops.
    this.hung.add(socket);
    const timer = setTimeout(() => socket.destroy(), HANG_MAX_MS);
    timer.unref();
    socket.once('close', () => {
      clearTimeout(timer);
      this.hung.delete(socket);
    });
  }

  closeAll(): void {
    for (const socket of this.hung) socket.destroy();
    this.hung.clear();
  }
}
