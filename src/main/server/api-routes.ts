import type { FastifyInstance, FastifyReply } from 'fastify';
import { api, OP_NAMES, type OpName } from '../../shared/api.contract';
import { API_PREFIX } from '../../shared/http-mapping';
import { fieldErrors, ValidationError } from '../../shared/validation-error';
import { inputTooDeep } from '../../shared/input-depth';
import type { Engine } from '../engine/engine.types';
import { errorAnswer } from '../engine/errors';
import type { ConfigWarning } from '../../shared/config.schema';

/** A request whose body held keys that are dropped (control-server.ts), as warnings. */
export interface KeysDropped {
  droppedKeys?: ConfigWarning[];
}

/** One route per operation of the contract: nothing here is written by hand per operation. */
export function registerApiRoutes(app: FastifyInstance, engine: Engine): void {
  for (const name of OP_NAMES) {
    const def = api[name];
    app.route({
      method: def.method,
      url: API_PREFIX + def.path,
      ...(def.bodyLimit === undefined ? {} : { bodyLimit: def.bodyLimit }),
      handler: async (req, reply) => {
        // Depth first, without recursion: the schemas recurse (input-depth.ts).
        const tooDeep = inputTooDeep(req.body);
        if (tooDeep) return sendError(reply, tooDeep);
        const input = {
          ...(req.query as object),
          ...(req.body && typeof req.body === 'object' ? (req.body as object) : {}),
          ...(req.params as object),
        };
        const parsed = def.input.safeParse(input);
        if (!parsed.success) return sendError(reply, new ValidationError(fieldErrors(parsed.error)));
        try {
          const handler = engine.handlers[name] as (i: unknown) => unknown;
          const answer = (await handler(parsed.data)) ?? null;
          // Keys the body parser took and the schema dropped (a mapping data's __proto__), told where an answer has warnings.
          const dropped = (req as KeysDropped).droppedKeys;
          if (dropped && answer && typeof answer === 'object' && Array.isArray((answer as { warnings?: unknown }).warnings)) {
            (answer as { warnings: unknown[] }).warnings.push(...dropped);
          }
          return reply.send(answer);
        } catch (err) {
          return sendError(reply, err);
        }
      },
    });
  }
}

/** Whatever was thrown, answered as IPC answers it (errorAnswer: status, code, message, fields). */
export function sendError(reply: FastifyReply, err: unknown): FastifyReply {
  const { status, body } = errorAnswer(err);
  return reply.code(status).send(body);
}

export type { OpName };
