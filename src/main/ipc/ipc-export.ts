import { createWriteStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { IpcResult, SavedExport } from '../../shared/bridge';
import { exportInputSchema } from '../../shared/simulation.contract';
import type { Engine } from '../engine/engine.types';
import { errorResult, parsePayload } from './ipc-core';

/**
 * The desktop window's export (Electron-free half; ipc-register.ts wires the channel and the save
 * dialog). The engine streams the file straight to the path the user picks, as GET /api/export/file
 * does for a browser: neither the main process nor the window ever holds it whole, so a 200,000-call
 * export costs no more memory than a small one. `choosePath` gets the suggested file name and
 * resolves to null when the user cancels.
 */
export async function saveExport(
  openExport: Engine['openExport'],
  payload: unknown,
  choosePath: (filename: string) => Promise<string | null>,
): Promise<IpcResult<SavedExport>> {
  const parsed = parsePayload(exportInputSchema, payload);
  if (!parsed.ok) return parsed;
  let writing: string | null = null;
  try {
    // Which calls go in is decided now, at the click; a bad filter fails before the dialog opens.
    const file = openExport(parsed.data);
    const path = await choosePath(file.filename);
    if (!path) return { ok: true, value: { saved: false } };
    writing = path;
    const out = createWriteStream(path);
    await pipeline(Readable.from(file.chunks, { objectMode: false }), out);
    return { ok: true, value: { saved: true, path, bytes: out.bytesWritten } };
  } catch (err) {
    // A file cut short (disk full, the engine stopping) must not look like an export.
    if (writing) await rm(writing, { force: true }).catch(() => undefined);
    return errorResult(err);
  }
}
