import { describe, expect, it } from 'vitest';
import { filterCommands, fuzzyScore, moveHighlight, type PaletteCommand } from '../../src/renderer/features/palette/palette-model';

const cmd = (id: string, title: string, group = 'Action', keywords?: string): PaletteCommand => ({ id, title, group, keywords });
const COMMANDS = [
  cmd('go-compose', 'Compose', 'Go to'),
  cmd('go-inspector', 'Inspector', 'Go to'),
  cmd('go-destinations', 'Destinations', 'Go to'),
  cmd('go-receivers', 'Mock receivers', 'Go to'),
  cmd('go-settings', 'Settings', 'Go to'),
  cmd('new-source', 'New source', 'Action', 'create write key'),
  cmd('send-test-call', 'Send a test call'),
  cmd('clear-filters', 'Clear inspector filters'),
  cmd('toggle-theme', 'Toggle theme (light / dark)', 'Action', 'dark mode appearance'),
];
const ids = (q: string) => filterCommands(COMMANDS, q).map((c) => c.id);

describe('palette filtering', () => {
  it('an empty query lists every command in order', () => {
    expect(ids('')).toEqual(COMMANDS.map((c) => c.id));
    expect(ids('   ')).toEqual(COMMANDS.map((c) => c.id));
  });

  it('matches characters in order, any case, anywhere; not out of order', () => {
    expect(fuzzyScore('dst', 'Destinations')).not.toBeNull();
    expect(fuzzyScore('DEST', 'destinations')).not.toBeNull();
    expect(fuzzyScore('tsd', 'Destinations')).toBeNull();
    expect(ids('xyz')).toEqual([]);
  });

  it('ranks a word start or a substring above a scattered match', () => {
    expect(ids('set')[0]).toBe('go-settings');
    expect(ids('insp')[0]).toBe('go-inspector');
    expect(ids('recv')[0]).toBe('go-receivers');
    expect(ids('test call')[0]).toBe('send-test-call');
    // "Go to" is part of a screen command's title.
    expect(ids('go dest')[0]).toBe('go-destinations');
  });

  it('finds a command by a keyword, below title matches', () => {
    expect(ids('dark')).toEqual(['toggle-theme']);
    expect(ids('write key')).toEqual(['new-source']);
  });

  it('ties keep the list order', () => {
    const twins = [cmd('a', 'Alpha'), cmd('b', 'Alpha')];
    expect(filterCommands(twins, 'alp').map((c) => c.id)).toEqual(['a', 'b']);
  });

  it('the highlight wraps at both ends', () => {
    expect(moveHighlight(0, -1, 3)).toBe(2);
    expect(moveHighlight(2, 1, 3)).toBe(0);
    expect(moveHighlight(1, 1, 3)).toBe(2);
    expect(moveHighlight(0, 1, 0)).toBe(0);
  });
});
