import { randomBytes } from 'node:crypto';
import { linkSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
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

/** Reads the token file (a test starts another process's making of it in between). */
export type ReadToken = (file: string) => string;

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
  read: ReadToken = (file) => readFileSync(file, 'utf8'),
): BridgeCredential {
  if (adminToken === undefined) return { token: tokenIn(tokenFile, read), shown: true, file: tokenFile };
  return { token: adminToken, shown: adminTokenFrom === 'argument' || adminTokenFrom === 'file', file: null };
}

/**
 * The token `file` holds, made there first when it holds none. `weir inspect` runs beside `weir serve`
 * (the data dir unlocked): a token is written whole under a private name and linked into place, never
 * over a file, so of two processes making one at once both end with the one that is there.
 */
function tokenIn(file: string, read: ReadToken): string {
  for (let tries = 0; ; tries++) {
    const held = heldToken(file, read);
    if (held) return held;
    if (held === '') emptiedAside(file);
    const draft = `${file}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
    writeFileSync(draft, `${randomBytes(24).toString('base64url')}\n`, { mode: 0o600, flag: 'wx' });
    try {
      linkSync(draft, file);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST' || tries >= 5) throw error;
    } finally {
      rmSync(draft, { force: true });
    }
  }
}

/**
 * Takes an empty token file (an operator's, or cut short by a full disk) out of the way: moved aside
 * under a private name first, so a token another process linked there meanwhile is put back, not lost.
 */
function emptiedAside(file: string): void {
  const aside = `${file}.${process.pid}.empty`;
  try {
    renameSync(file, aside);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw error;
  }
  try {
    if (readFileSync(aside, 'utf8').trim()) linkSync(aside, file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  } finally {
    rmSync(aside, { force: true });
  }
}

/** The token in `file`, '' when it is empty, null when there is no file. */
function heldToken(file: string, read: ReadToken): string | null {
  try {
    return read(file).trim();
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
