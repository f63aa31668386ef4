import { defineConfig } from 'vitest/config';

// The differential test against Segment's real webhook destination (npm run test:fidelity): its
// packages are installed in tests/fidelity/node_modules, apart from the lab's (package.json there).
export default defineConfig({
  test: {
    root: new URL('../..', import.meta.url).pathname,
    include: ['tests/fidelity/**/*.fidelity.ts'],
    environment: 'node',
    testTimeout: 300_000,
    hookTimeout: 30_000,
    pool: 'forks',
    maxWorkers: 1,
  },
});
