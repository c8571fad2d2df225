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

/** The bridge token's file in the data dir. */
export const INSPECTOR_TOKEN_FILE = 'inspector-token';

/** The token the bridge asks of every socket, and the file holding it. */
export type BridgeCredential = { token: string; file: string };

/** Reads the token file (a test starts another process's making of it in between). */
export type ReadToken = (file: string) => string;

/**
 * The token in `tokenFile` (made there, 0600, at the first start with `--inspect`, kept after), so a
 * bookmarked page still connects after a restart. Never the admin token, even when one is set: the
 * token sits in a page address (history, bookmarks), and the admin token creates organizations.
 */
export function bridgeCredential(
  tokenFile: string,
  read: ReadToken = (file) => readFileSync(file, 'utf8'),
): BridgeCredential {
  return { token: tokenIn(tokenFile, read), file: tokenFile };
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

/** Where to open the bridge page: with its token at a terminal, else (a log line) saying where that token is. */
export function bridgeInvitation(page: string, credential: BridgeCredential, terminal: boolean): string {
  if (terminal) return bridgePageUrl(page, credential.token);
  return `${page}/#token=<the token in ${credential.file}>`;
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
