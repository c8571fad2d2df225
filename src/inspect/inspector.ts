import { createWebSocketInspector } from '@statelyai/inspect';
import { startInspectorBridge } from './inspector-bridge.ts';
import type { Logger } from '../shared/logger.ts';
import type { InspectorSink } from './machine-inspection.ts';

export type OpenedInspector = { sink: InspectorSink; url: string; page: string | null; stop(): Promise<void> };

/**
 * Connects to a Stately inspector. `target` is a WebSocket URL of a running inspector server, or a
 * port: then Weir's bridge page is started there, on loopback (http://localhost:PORT, relaying to the
 * Stately inspector). Events wait in memory (up to `maxDeferred`) until the socket is open.
 */
export async function openInspector(
  target: string,
  options: { logger: Logger; maxDeferred?: number },
): Promise<OpenedInspector> {
  const bridge = /^\d{1,5}$/.test(target)
    ? await startInspectorBridge({ port: Number(target), logger: options.logger })
    : null;
  const url = bridge?.url ?? target;
  const inspector = createWebSocketInspector({ url, maxDeferredEvents: options.maxDeferred ?? 1000 });
  return {
    sink: inspector,
    url,
    page: bridge?.page ?? null,
    async stop() {
      inspector.stop();
      await bridge?.stop();
    },
  };
}
