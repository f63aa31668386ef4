import { z } from 'zod';
import { op } from './api-op';
import type { Source } from './types';
import type { MockReceiverView } from './simulation.contract';

// First run (issue 14, Ergonomics): one click from an empty app to a delivered, signed call. The
// demo is a source with a mock receiver attached (the receiver's secret is the source's shared
// secret) and one sample call; the engine marks what it created so "Remove demo" deletes only that.

export interface Demo {
  /** null when the demo source was deleted by hand meanwhile. */
  source: Source | null;
  receiver: MockReceiverView | null;
  /** The sample call(s) the demo sent (the first is the one to open). */
  callIds: number[];
}

export interface RemovedDemo {
  sourceRemoved: boolean;
  receiverRemoved: boolean;
  callsRemoved: number;
}

export const demoOps = {
  /** The demo this lab holds, or null. */
  getDemo: op<Demo | null>()('GET', '/demo', z.strictObject({})),
  /** Creates the demo and sends its sample call; when a demo exists, returns it unchanged (idempotent). */
  createDemo: op<Demo & { created: boolean }>()('POST', '/demo', z.strictObject({})),
  /** Deletes the demo's source, receiver and sample calls, nothing else; nothing to remove is not an error. */
  removeDemo: op<RemovedDemo>()('DELETE', '/demo', z.strictObject({})),
} as const;
