import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { api, OP_NAMES, type OpName } from '../../shared/api.contract';
import { API_PREFIX } from '../../shared/http-mapping';
import { ValidationError } from '../../shared/validation-error';
import { checkOpInput, type InputChecked } from './op-body';
import { sendAnswer } from './json-answer';
import type { Engine } from '../engine/engine.types';
import { errorAnswer } from '../engine/errors';
import type { ConfigWarning } from '../../shared/config.schema';

/** A request whose body held keys that are dropped (control-server.ts), as warnings. */
export interface KeysDropped {
  droppedKeys?: ConfigWarning[];
}

/** A request whose large body was read and its input checked in a worker (body-pool.ts). */
export interface BodyChecked {
  checked?: InputChecked & KeysDropped;
}

/** The operation a request's route serves, if it is one of the contract's. */
export function opOf(req: FastifyRequest): OpName | undefined {
  return (req.routeOptions.config as { op?: OpName } | undefined)?.op;
}

/** One route per operation of the contract: nothing here is written by hand per operation. */
export function registerApiRoutes(app: FastifyInstance, engine: Engine): void {
  for (const name of OP_NAMES) {
    const def = api[name];
    app.route({
      method: def.method,
      url: API_PREFIX + def.path,
      ...(def.bodyLimit === undefined ? {} : { bodyLimit: def.bodyLimit }),
      config: { op: name },
      handler: async (req, reply) => {
        const checked = (req as BodyChecked).checked ?? checkOpInput(name, req.query, req.body, req.params);
        if (!checked.ok) return sendError(reply, new ValidationError(checked.fields));
        try {
          const handler = engine.handlers[name] as (i: unknown) => unknown;
          const answer = (await handler(checked.data)) ?? null;
          // Keys the body parser took and the schema dropped (a mapping data's __proto__), told where an answer has warnings.
          const dropped = (req as BodyChecked).checked?.droppedKeys ?? (req as KeysDropped).droppedKeys;
          if (dropped && answer && typeof answer === 'object' && Array.isArray((answer as { warnings?: unknown }).warnings)) {
            (answer as { warnings: unknown[] }).warnings.push(...dropped);
          }
          return sendAnswer(reply, answer);
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
