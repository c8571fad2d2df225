import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { createWebSocketInspector } from '@statelyai/inspect';
import type { Logger } from '../shared/logger.ts';
import { bridgePageUrl, bridgeSocketUrl, startInspectorBridge } from './inspector-bridge.ts';
import { type InspectorSink, namingActors } from './machine-inspection.ts';

export type OpenedInspector = {
  sink: InspectorSink;
  url: string;
  page: string | null;
  /** With the bridge page: settles once a page has opened (see `InspectorBridge.watched`); null otherwise. */
  watched: Promise<void> | null;
  stop(): Promise<void>;
};

/** The bridge token's file in the data dir, when no admin token is set. */
export const INSPECTOR_TOKEN_FILE = 'inspector-token';

/**
 * The token the bridge asks of every socket; whether the operator's terminal may be shown it; and the
 * file holding it when it is not the admin token (null when it is).
 */
export type BridgeCredential = { token: string; shown: boolean; file: string | null };

/**
 * The admin token when one is configured, else the one in `tokenFile` (made there, 0600, at the first
 * start with `--inspect`, kept after): so `--inspect` works without an admin token, where no terminal
 * shows the token too (a process manager, a service), and a bookmarked page still connects after a
 * restart. It is shown at a terminal, and an admin token only when it came from the command line or
 * a file (one in the environment may be a deployment's secret).
 */
export function bridgeCredential(
  adminToken: string | undefined,
  adminTokenFrom: 'argument' | 'file' | 'environment' | undefined,
  tokenFile: string,
): BridgeCredential {
  if (adminToken === undefined) return { token: tokenIn(tokenFile), shown: true, file: tokenFile };
  return { token: adminToken, shown: adminTokenFrom === 'argument' || adminTokenFrom === 'file', file: null };
}

/** The token `file` holds, made there first when it holds none. */
function tokenIn(file: string): string {
  const held = heldToken(file);
  if (held) return held;
  const made = randomBytes(24).toString('base64url');
  try {
    // An empty file is filled; a missing one made with 'wx', so that of two processes starting at once one token stays.
    writeFileSync(file, `${made}\n`, { mode: 0o600, flag: held === null ? 'wx' : 'w' });
  } catch (error) {
    const first = (error as NodeJS.ErrnoException).code === 'EEXIST' ? heldToken(file) : null;
    if (first) return first;
    throw error;
  }
  return made;
}

/** The token in `file`, '' when it is empty, null when there is no file. */
function heldToken(file: string): string | null {
  try {
    return readFileSync(file, 'utf8').trim();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
}

/** Where to open the bridge page: with its token when the terminal may show it, else saying where that token is. */
export function bridgeInvitation(page: string, credential: BridgeCredential, terminal: boolean): string {
  if (credential.shown && terminal) return bridgePageUrl(page, credential.token);
  return `${page}/#token=${credential.file ? `<the token in ${credential.file}>` : '<the admin token>'}`;
}

/**
 * Connects to a Stately inspector. `target` is a WebSocket URL of a running inspector server, or a
 * port: then Weir's bridge page is started there, on loopback (http://localhost:PORT, relaying to the
 * Stately inspector), taking sockets with `token` only; Weir's own sends it. Events wait in memory
 * (up to `maxDeferred`) until the socket is open. An inspector server of its own is sent no token.
 */
export async function openInspector(
  target: string,
  options: { logger: Logger; token: string; maxDeferred?: number; showing?: 'live' | 'replay' },
): Promise<OpenedInspector> {
  const bridge = /^\d{1,5}$/.test(target)
    ? await startInspectorBridge({
        port: Number(target),
        logger: options.logger,
        token: options.token,
        showing: options.showing,
      })
    : null;
  const url = bridge?.url ?? target;
  const naming = namingActors();
  const inspector = createWebSocketInspector({
    url: bridge ? bridgeSocketUrl(bridge.url, options.token) : target,
    maxDeferredEvents: options.maxDeferred ?? 1000,
    serialize: naming.serialize,
  });
  return {
    sink: naming.sink(inspector),
    url,
    page: bridge?.page ?? null,
    watched: bridge?.watched ?? null,
    async stop() {
      inspector.stop();
      await bridge?.stop();
    },
  };
}
