import { useSyncExternalStore } from 'react';

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

export function useColorScheme(): 'light' | 'dark' {
  return useSyncExternalStore(
    (l) => {
      const mq = matchMedia('(prefers-color-scheme: dark)');
      mq.addEventListener('change', l);
      return () => mq.removeEventListener('change', l);
    },
    () => (matchMedia('(prefers-color-scheme: dark)').matches ? 'dark' : 'light'),
  );
}
