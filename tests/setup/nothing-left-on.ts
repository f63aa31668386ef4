import { afterAll, vi } from 'vitest';

// Vitest runs with isolate: false (vitest.config.mts): a worker runs file after file in one process,
// so a file that leaves fake timers, stubbed globals or stubbed env behind changes the files after it,
// which differ by machine (the order follows each machine's timings). Fail the file that left them.
afterAll(() => {
  const left: string[] = [];
  if (vi.isFakeTimers()) left.push('fake timers (vi.useRealTimers())');
  vi.useRealTimers();
  vi.unstubAllGlobals();
  vi.unstubAllEnvs();
  if (left.length) throw new Error(`this file left ${left.join(', ')} on; the next file in this worker would inherit it`);
});
