import type { ReactNode } from 'react';
import { callHref } from '../screens';
import { useAppStore } from '../store-context';
import type { InspectorFilters } from '../../shared/delivery-filters';

/**
 * A link to one call in the inspector, at its address (`#/inspector/<id>`): a click opens it with the
 * inspector's filters cleared (openCallInInspector, which asks first when edits would be lost);
 * Ctrl/Cmd/Shift+click or the context menu opens or copies the permalink as any link.
 */
export function CallLink({ id, testId, filters, children }: { id: number; testId?: string; filters?: Partial<InspectorFilters>; children: ReactNode }) {
  const store = useAppStore();
  return (
    <a
      href={callHref(id)}
      data-testid={testId}
      onClick={(e) => {
        if (e.button !== 0 || e.ctrlKey || e.metaKey || e.shiftKey || e.altKey) return;
        e.preventDefault();
        store.getState().openCallInInspector(id, filters);
      }}
    >
      {children}
    </a>
  );
}
