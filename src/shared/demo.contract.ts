import { z } from 'zod';
import { op } from './api-op';
import { fullSourceOutput } from './api-outputs';
import { mockReceiverViewOutput } from './mock-receiver.schema';

// First run (issue 14, Ergonomics): one click from an empty app to a delivered, signed call. The
// demo is a source with a mock receiver attached (the receiver's secret is the source's shared
// secret) and one sample call; the engine marks what it created so "Remove demo" deletes only that.

export const demoOutput = z.object({
  /** null when the demo source was deleted by hand meanwhile. */
  source: fullSourceOutput.nullable(),
  receiver: mockReceiverViewOutput.nullable(),
  /** The sample call(s) the demo sent (the first is the one to open). */
  callIds: z.array(z.number().int()),
});
export type Demo = z.output<typeof demoOutput>;

export const removedDemoOutput = z.object({ sourceRemoved: z.boolean(), receiverRemoved: z.boolean(), callsRemoved: z.number().int() });
export type RemovedDemo = z.output<typeof removedDemoOutput>;

export const demoOps = {
  /** The demo this lab holds, or null. */
  getDemo: op<Demo | null>()('GET', '/demo', z.strictObject({}), { output: demoOutput.nullable() }),
  /** Creates the demo and sends its sample call; when a demo exists, returns it unchanged (idempotent). */
  createDemo: op<Demo & { created: boolean }>()('POST', '/demo', z.strictObject({}), { output: demoOutput.extend({ created: z.boolean() }) }),
  /** Deletes the demo's source, receiver and sample calls, nothing else; nothing to remove is not an error. */
  removeDemo: op<RemovedDemo>()('DELETE', '/demo', z.strictObject({}), { output: removedDemoOutput }),
} as const;
