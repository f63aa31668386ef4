import { Readable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { API_PREFIX, EXPORT_FILE_PATH } from '../../shared/http-mapping';
import { exportInputSchema } from '../../shared/simulation.contract';
import { fieldErrors, ValidationError } from '../../shared/validation-error';
import type { Engine } from '../engine/engine.types';
import { sendError } from './api-routes';

/**
 * GET /api/export/file: exportDeliveries (same query) as the file itself, streamed as it is read,
 * with Content-Disposition, instead of JSON holding the whole text. `curl -OJ` saves it; the web UI
 * downloads through it.
 *
 * Backpressure is the pull: the stream asks the engine for its next piece (a slice's text,
 * export-slices.ts) only while its buffer is under its high-water mark, and the pipe into the
 * response stops reading it while the socket has not drained, so a slow client holds up the export,
 * not memory. A client that goes away closes the response; Fastify then destroys the stream, which
 * returns the engine's generator at its next piece: the work ends there (tests/integration/export-stream.test.ts).
 */
export function registerExportRoute(app: FastifyInstance, engine: Engine): void {
  app.get(API_PREFIX + EXPORT_FILE_PATH, async (req, reply) => {
    const parsed = exportInputSchema.safeParse(req.query);
    if (!parsed.success) return sendError(reply, new ValidationError(fieldErrors(parsed.error)));
    let file;
    try {
      file = engine.openExport(parsed.data);
    } catch (err) {
      return sendError(reply, err);
    }
    return reply
      .header('content-type', `${file.contentType}; charset=utf-8`)
      .header('content-disposition', `attachment; filename="${file.filename}"`)
      .header('cache-control', 'no-store')
      .send(Readable.from(file.chunks, { objectMode: false }));
  });
}
