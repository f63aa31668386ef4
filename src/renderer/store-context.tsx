import { createContext, useContext } from 'react';
import { useStore } from 'zustand';
import { useShallow } from 'zustand/react/shallow';
import type { AppState, AppStore } from './stores/app.store';

export const StoreContext = createContext<AppStore | null>(null);

export function useAppStore(): AppStore {
  const store = useContext(StoreContext);
  if (!store) throw new Error('StoreContext is missing');
  return store;
}

/** Select from the app store; the selector should return a stable value or use `useAppShallow`. */
export function useApp<T>(selector: (s: AppState) => T): T {
  return useStore(useAppStore(), selector);
}

/** For selectors that build an object or array each time: re-render only when its members change. */
export function useAppShallow<T>(selector: (s: AppState) => T): T {
  return useStore(useAppStore(), useShallow(selector));
}
