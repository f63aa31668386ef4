import { describe, expect, it } from 'vitest';
import { isModuleLoadError } from '../../src/renderer/components/module-load-error';

describe('a script of the app that could not be loaded', () => {
  it("is told from a bug by each browser's message", () => {
    for (const message of [
      'Failed to fetch dynamically imported module: http://127.0.0.1:8788/assets/call-detail-N6zw.js',
      'error loading dynamically imported module: http://127.0.0.1:8788/assets/plans-screen-x.js',
      'Importing a module script failed.',
      'Unable to preload CSS for /assets/index-x.css',
    ]) expect(isModuleLoadError(new TypeError(message)), message).toBe(true);
  });
  it('a render error is not one', () => {
    expect(isModuleLoadError(new TypeError("Cannot read properties of undefined (reading 'id')"))).toBe(false);
    expect(isModuleLoadError('Failed to fetch dynamically imported module')).toBe(false);
    expect(isModuleLoadError(null)).toBe(false);
  });
});
