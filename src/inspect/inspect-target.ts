/** Why `target` is not an inspector target, or null: a ws:// or wss:// URL, or a port to start the bridge on. */
export function inspectTargetProblem(target: string): string | null {
  if (/^\d{1,5}$/.test(target)) return Number(target) >= 1 && Number(target) <= 65535 ? null : 'port out of range';
  try {
    const url = new URL(target);
    return url.protocol === 'ws:' || url.protocol === 'wss:' ? null : 'not a ws:// or wss:// URL';
  } catch {
    return 'neither a port nor a ws:// URL';
  }
}
