import { randomBytes } from 'node:crypto';
import { createWebSocketInspector } from '@statelyai/inspect';
import type { Logger } from '../shared/logger.ts';
import { bridgePageUrl, bridgeSocketUrl, startInspectorBridge } from './inspector-bridge.ts';
import type { InspectorSink } from './machine-inspection.ts';

export type OpenedInspector = { sink: InspectorSink; url: string; page: string | null; stop(): Promise<void> };

/** The token the bridge asks of every socket, and whether the operator's terminal may be shown it. */
export type BridgeCredential = { token: string; generated: boolean; shown: boolean };

/**
 * The admin token when one is configured, else one made for this run (so `--inspect` works without
 * one). Like the dashboard's first-run token, it is shown at a terminal only, and an admin token only
 * when it came from the command line or a file (one in the environment may be a deployment's secret).
 */
export function bridgeCredential(
  adminToken: string | undefined,
  adminTokenFrom: 'argument' | 'file' | 'environment' | undefined,
): BridgeCredential {
  if (adminToken === undefined) return { token: randomBytes(24).toString('base64url'), generated: true, shown: true };
  return { token: adminToken, generated: false, shown: adminTokenFrom === 'argument' || adminTokenFrom === 'file' };
}

/** Where to open the bridge page: with its token when the terminal may show it, else saying which token goes there. */
export function bridgeInvitation(page: string, credential: BridgeCredential, terminal: boolean): string {
  if (credential.shown && terminal) return bridgePageUrl(page, credential.token);
  return `${page}/#token=${
    credential.generated
      ? '<the one-time inspector token, shown only at a terminal; or give --admin-token-file>'
      : '<the admin token>'
  }`;
}

/**
 * Connects to a Stately inspector. `target` is a WebSocket URL of a running inspector server, or a
 * port: then Weir's bridge page is started there, on loopback (http://localhost:PORT, relaying to the
 * Stately inspector), taking sockets with `token` only; Weir's own sends it. Events wait in memory
 * (up to `maxDeferred`) until the socket is open. An inspector server of its own is sent no token.
 */
export async function openInspector(
  target: string,
  options: { logger: Logger; token: string; maxDeferred?: number },
): Promise<OpenedInspector> {
  const bridge = /^\d{1,5}$/.test(target)
    ? await startInspectorBridge({ port: Number(target), logger: options.logger, token: options.token })
    : null;
  const url = bridge?.url ?? target;
  const inspector = createWebSocketInspector({
    url: bridge ? bridgeSocketUrl(bridge.url, options.token) : target,
    maxDeferredEvents: options.maxDeferred ?? 1000,
  });
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
