export const DESKTOP_NODE: string;
export function desktopNodeHint(version: string): string;
