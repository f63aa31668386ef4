import { useSyncExternalStore } from 'react';
import { useTheme } from '../theme';

// One shared 1 s ticker for every countdown on screen, running only while something listens.
const listeners = new Set<() => void>();
let now = Date.now();
let timer: ReturnType<typeof setInterval> | null = null;

function subscribe(l: () => void) {
  listeners.add(l);
  if (!timer) {
    now = Date.now();
    timer = setInterval(() => {
      now = Date.now();
      for (const x of listeners) x();
    }, 1000);
  }
  return () => {
    listeners.delete(l);
    if (listeners.size === 0 && timer) {
      clearInterval(timer);
      timer = null;
    }
  };
}

export function useNow(): number {
  return useSyncExternalStore(subscribe, () => now);
}

/** The scheme on screen: the one chosen in Settings, or the system's (src/renderer/theme.ts). */
export function useColorScheme(): 'light' | 'dark' {
  return useTheme().scheme;
}
