// Kept in step with package.json by the test in tests/unit/version.test.ts.
export const VERSION = '0.1.0';
