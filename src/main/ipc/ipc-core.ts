import { fileURLToPath } from 'node:url';
import { resolve } from 'node:path';
import { api, OP_NAMES, type ApiHandlers, type EngineEvent, type OpName } from '../../shared/api.contract';
import type { ZodType } from 'zod';
import type { BridgeError, IpcResult } from '../../shared/bridge';
import { describeErrors, fieldErrors, type FieldError } from '../../shared/validation-error';
import { codeOfStatus, type ErrorCode } from '../../shared/error-codes';
import { errorAnswer } from '../engine/errors';
import { inputTooDeep } from '../../shared/input-depth';
import { coalesce } from '../../shared/coalesce';
import type { BodyTask, BodyTaskResult } from '../server/op-body';

// The Electron-free half of the IPC adapter: which ops exist, who may call them, how a payload is
// validated and how any outcome becomes an `IpcResult`. Electron-specific wiring is in ipc-register.ts.

export function isOpName(name: unknown): name is OpName {
  return typeof name === 'string' && (OP_NAMES as string[]).includes(name);
}

/** Where the app's own renderer lives: the built file, or the dev server during `electron-vite dev`. */
export interface RendererLocation {
  indexFile: string;
  devServerUrl?: string;
}

export interface SenderInfo {
  /** `event.senderFrame?.url`; undefined when the frame is gone. */
  url: string | undefined;
  /** Whether the frame is the top-level frame of its page. */
  topLevel: boolean;
}

/** True only for the top-level frame of the app's own page; anything else (iframes, other files, other origins) is refused. */
export function isTrustedSender(sender: SenderInfo, renderer: RendererLocation): boolean {
  if (!sender.url || !sender.topLevel) return false;
  let url: URL;
  try {
    url = new URL(sender.url);
  } catch {
    return false;
  }
  if (renderer.devServerUrl) {
    try {
      if (url.origin === new URL(renderer.devServerUrl).origin) return true;
    } catch {
      // A malformed dev URL trusts nothing.
    }
  }
  if (url.protocol !== 'file:') return false;
  try {
    // Query and hash are the renderer's own routing; the path must be exactly the index file.
    url.search = '';
    url.hash = '';
    return resolve(fileURLToPath(url)) === resolve(renderer.indexFile);
  } catch {
    return false;
  }
}

export function failure(status: number, error: string, fields: FieldError[] = [], code: ErrorCode = codeOfStatus(status)): { ok: false } & BridgeError {
  return { ok: false, status, code, error, fields };
}

/** Whatever a handler threw, answered as the control API answers it (errorAnswer: status, code, message, fields). */
export function errorResult(err: unknown): IpcResult<never> {
  const { status, body } = errorAnswer(err);
  return failure(status, body.error, body.fields ?? [], body.code);
}

/** `payload` parsed by `schema`, or the 400 failure naming every bad field. */
export function parsePayload<T>(schema: ZodType<T>, payload: unknown): { ok: true; data: T } | ({ ok: false } & BridgeError) {
  // Depth first, without recursion: the schemas recurse (input-depth.ts).
  const tooDeep = inputTooDeep(payload);
  if (tooDeep) return failure(400, tooDeep.message, tooDeep.fields);
  const parsed = schema.safeParse(payload ?? {});
  if (parsed.success) return { ok: true, data: parsed.data };
  const fields = fieldErrors(parsed.error);
  return failure(400, describeErrors(fields), fields);
}

/** Where a large payload is checked off the event loop (the control API's BodyPool: a worker thread). */
export interface PayloadReader {
  readonly offloadBytes: number;
  read(task: BodyTask): Promise<BodyTaskResult | { ok: false; unreadable: string }>;
}

/**
 * A payload checked in the worker when it is large (a config of thousands of sources: its schema
 * check held the desktop's loop, and so the collector, for a second), as the control API checks a
 * large body; null when it is small, or not plain JSON, and is checked here. Its JSON text is what the
 * worker reads: Electron's structured clone carries nothing else from a renderer that sends JSON.
 */
async function offloaded(reader: PayloadReader | undefined, name: OpName, payload: unknown): Promise<{ ok: true; data: unknown } | ({ ok: false } & BridgeError) | null> {
  if (!reader || payload === null || typeof payload !== 'object') return null;
  let text: string;
  try {
    text = JSON.stringify(payload);
  } catch {
    return null;
  }
  if (text.length <= reader.offloadBytes) return null;
  const read = await reader.read({ op: name, text, isConfig: false, query: {}, params: {} });
  if (read.ok) return { ok: true, data: read.data };
  if ('unreadable' in read) return failure(413, `the input is too large for the lab to read (${read.unreadable}): send fewer or smaller items`);
  if ('invalidJson' in read) return null;
  return failure(400, describeErrors(read.fields), read.fields);
}

/** Validates `payload` with the op's schema (a large one in `reader`'s worker), runs the handler and wraps the outcome; never throws. */
export async function invokeOp(handlers: ApiHandlers, name: unknown, payload: unknown, reader?: PayloadReader): Promise<IpcResult> {
  if (!isOpName(name)) return failure(404, `unknown operation: ${String(name)}`);
  const parsed = (await offloaded(reader, name, payload).catch(() => null)) ?? parsePayload(api[name].input as ZodType<unknown>, payload);
  if (!parsed.ok) return parsed;
  try {
    const handler = handlers[name] as (input: unknown) => unknown;
    const value = await handler(parsed.data);
    return { ok: true, value };
  } catch (err) {
    return errorResult(err);
  }
}

/**
 * Coalesces engine event batches so the window gets at most one IPC message per interval under
 * load (DESIGN: batched, throttled updates), while a quiet engine's first batch goes out at once.
 */
export function createEventForwarder(send: (batch: EngineEvent[]) => void, intervalMs = 50) {
  const pending = coalesce<EngineEvent>({ maxWaitMs: intervalMs, leading: true, flush: send });
  return {
    push: (events: EngineEvent[]) => pending.pushAll(events),
    /** Drops anything pending (the window is closing). */
    dispose: () => pending.dispose(),
  };
}
