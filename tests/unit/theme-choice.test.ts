import { afterEach, describe, expect, it, vi } from 'vitest';
import { bootTheme, themeBootScript, THEME_CHOICES, THEME_KEY } from '../../src/renderer/theme-boot';
import { parseThemeChoice, readThemeChoice, resolveScheme, toggledChoice } from '../../src/renderer/theme';

describe('theme choice', () => {
  it('anything stored but a known choice means follow the system', () => {
    expect(parseThemeChoice('dark')).toBe('dark');
    expect(parseThemeChoice('light')).toBe('light');
    expect(parseThemeChoice('system')).toBe('system');
    for (const v of [null, undefined, '', 'Dark', 'blue', 1]) expect(parseThemeChoice(v)).toBe('system');
    expect(readThemeChoice({ getItem: (k) => (k === THEME_KEY ? 'light' : null) })).toBe('light');
    expect(readThemeChoice(null)).toBe('system');
    expect(
      readThemeChoice({
        getItem: () => {
          throw new Error('SecurityError');
        },
      }),
    ).toBe('system');
  });

  it('system follows the system; an explicit choice does not', () => {
    expect(resolveScheme('system', true)).toBe('dark');
    expect(resolveScheme('system', false)).toBe('light');
    expect(resolveScheme('light', true)).toBe('light');
    expect(resolveScheme('dark', false)).toBe('dark');
  });

  it('toggle picks the scheme opposite to the one on screen', () => {
    expect(toggledChoice('system', true)).toBe('light');
    expect(toggledChoice('system', false)).toBe('dark');
    expect(toggledChoice('dark', false)).toBe('light');
    expect(toggledChoice('light', true)).toBe('dark');
  });
});

describe('the boot script', () => {
  afterEach(() => vi.unstubAllGlobals());

  function run(stored: string | null, script = themeBootScript()) {
    const attrs: Record<string, string> = {};
    vi.stubGlobal('localStorage', { getItem: (k: string) => (k === THEME_KEY ? stored : null) });
    vi.stubGlobal('document', { documentElement: { setAttribute: (k: string, v: string) => (attrs[k] = v) } });
    // As the page runs it: the inlined text, on its own.
    new Function(script)();
    return attrs['data-theme'];
  }

  it('applies a stored light or dark choice, nothing for system or junk', () => {
    expect(run('dark')).toBe('dark');
    expect(run('light')).toBe('light');
    expect(run('system')).toBeUndefined();
    expect(run('"><script>')).toBeUndefined();
    expect(run(null)).toBeUndefined();
  });

  it('is self-contained and carries the app key and choices', () => {
    const script = themeBootScript();
    expect(script).toContain(JSON.stringify(THEME_KEY));
    expect(script).toContain(JSON.stringify(THEME_CHOICES));
    expect(script).not.toContain('</script');
    expect(bootTheme.length).toBe(2);
  });

  it('survives storage that throws', () => {
    vi.stubGlobal('localStorage', {
      getItem: () => {
        throw new Error('denied');
      },
    });
    vi.stubGlobal('document', { documentElement: { setAttribute: () => undefined } });
    expect(() => new Function(themeBootScript())()).not.toThrow();
  });
});
