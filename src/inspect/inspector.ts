import { createWebSocketInspector } from '@statelyai/inspect';
import { createInspectorServer } from '@statelyai/inspect/server';
import type { InspectorSink } from './machine-inspection.ts';

export type OpenedInspector = { sink: InspectorSink; url: string; page: string | null; stop(): void };

/**
 * Connects to a Stately inspector. `target` is a WebSocket URL of a running inspector server, or a
 * port: then `@statelyai/inspect`'s bridge is started there (a page at http://localhost:PORT that
 * relays to the Stately inspector; it listens on every interface, so it is for a development machine).
 * Events wait in memory (up to `maxDeferred`) until the socket is open.
 */
export function openInspector(target: string, options: { maxDeferred?: number } = {}): OpenedInspector {
  let bridge: { stop(): void } | null = null;
  let url = target;
  let page: string | null = null;
  if (/^\d{1,5}$/.test(target)) {
    const port = Number(target);
    bridge = createInspectorServer({ port, autoOpen: false });
    url = `ws://localhost:${port}`;
    page = `http://localhost:${port}`;
  }
  const inspector = createWebSocketInspector({ url, maxDeferredEvents: options.maxDeferred ?? 1000 });
  return {
    sink: inspector,
    url,
    page,
    stop() {
      inspector.stop();
      bridge?.stop();
    },
  };
}
