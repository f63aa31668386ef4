import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';

// Issue 27: the renderer had imports running back up (a store importing a feature for PAGE_SIZE,
// the inspector importing the tracking plans', load's and receivers' widgets). The rule in
// eslint.config.mjs keeps them out: each case lints a one-line file as if it stood at `file`.
const eslint = new ESLint({ cwd: process.cwd() });

async function restricted(file: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath: file });
  return result.messages.filter((m) => m.ruleId === 'no-restricted-imports').map((m) => m.message);
}

describe('renderer layering lint rule', () => {
  it.each([
    // the three that ran back up before issue 27
    ['src/renderer/stores/inspector.slice.ts', "import { PAGE_SIZE } from '../features/inspector/call-list-model';"],
    ['src/renderer/features/inspector/call-detail.tsx', "import { PlanCheckView } from '../tracking-plans/violations-view';"],
    ['src/renderer/features/inspector/inspector-screen.tsx', "import { ExportMenu } from '../load/export-menu';"],
    ['src/renderer/features/inspector/inspector-screen.tsx', "import { TimeWarpControl } from '../receivers/time-warp';"],
    // the same through other spellings and from other lower layers
    ['src/renderer/features/inspector/call-list.tsx', "export { ViolationsBadge } from '../../features/tracking-plans/violations-view';"],
    ['src/renderer/features/inspector/call-list.tsx', "import type { LoadDraft } from '../load';"],
    ['src/renderer/features/destinations/parts/row.tsx', "import { x } from '../../receivers/receiver-form';"],
    ['src/renderer/components/field.tsx', "import { x } from '../features/compose/compose-screen';"],
    ['src/renderer/first-page/first-page.ts', "import { CALL_COLUMNS } from '../features/inspector/call-list-model';"],
    ['src/renderer/shortcuts.ts', "import { INSPECTOR_SHORTCUT_GROUP } from './features/inspector/shortcuts';"],
  ])('%s: refuses %s', async (file, code) => {
    const messages = await restricted(file, code);
    expect(messages).toHaveLength(1);
    expect(messages[0]).toMatch(/feature/);
  });

  it.each([
    ['src/renderer/app.tsx', "import { InspectorScreen } from './features/inspector/inspector-screen';"],
    ['src/renderer/features/inspector/call-detail.tsx', "import { PlanCheckView } from '../../components/violations-view';"],
    ['src/renderer/features/inspector/call-list.tsx', "import { CALL_COLUMNS } from '../../components/call-list-model';"],
    ['src/renderer/features/inspector/inspector-screen.tsx', "import { InspectorDetail } from './call-detail';"],
    ['src/renderer/features/load/load-screen.tsx', "import type { LoadDraft } from '../../stores/load-model';"],
    ['src/renderer/features/destinations/parts/row.tsx', "import { x } from '../webhooks-form';"],
    ['src/renderer/stores/inspector.slice.ts', "import { PAGE_SIZE } from '../components/call-list-model';"],
  ])('%s: allows %s', async (file, code) => {
    expect(await restricted(file, code)).toEqual([]);
  });

  it('keeps the renderer-wide rule in the narrower blocks (no src/main from a feature)', async () => {
    expect(await restricted('src/renderer/features/inspector/call-list.tsx', "import { x } from '../../../main/engine/engine';")).toHaveLength(1);
    expect(await restricted('src/renderer/stores/app.store.ts', "import { x } from 'node:fs';")).toHaveLength(1);
  });
});
