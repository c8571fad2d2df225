import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { type WebSocket, WebSocketServer } from 'ws';
import type { Logger } from '../shared/logger.ts';
import { hashSecret, secretsEqual } from '../tenancy/secrets.ts';

/** Where the inspector's interface is served from; the bridge page embeds it. */
export const STATELY_INSPECTOR_URL = 'https://stately.ai/inspect';

const SCRIPT = readFileSync(new URL('./bridge.js', import.meta.url));
const STYLE = `html, body { height: 100%; margin: 0; font: 14px/1.4 system-ui, sans-serif; }
body { display: flex; flex-direction: column; }
header { padding: 6px 12px; background: #2f5a61; color: #fff; }
iframe { flex: 1; width: 100%; border: 0; }
#states { max-height: 45vh; overflow: auto; padding: 6px 12px; border-bottom: 1px solid #ccc; }
#states[hidden] { display: none; }
#states table { border-collapse: collapse; }
#states th, #states td { padding: 2px 12px 2px 0; text-align: left; vertical-align: top; }
#states td:first-child { overflow-wrap: anywhere; }
@media (max-width: 600px) {
  #states thead { display: none; }
  #states tr { display: block; padding: 4px 0; border-bottom: 1px solid #eee; }
  #states td { display: block; padding: 0; }
  #states td:first-child { font-weight: 600; }
}
`;

export type InspectorBridge = {
  /** The page to open and the socket Weir sends to, without their token (see `bridgePageUrl`, `bridgeSocketUrl`). */
  page: string;
  url: string;
  port: number;
  /** Settles when the first page (a browser socket, with an Origin) has connected: `weir inspect` waits for it. */
  watched: Promise<void>;
  stop(): Promise<void>;
};

/** The bridge's socket, with the token every socket must carry. */
export const bridgeSocketUrl = (url: string, token: string): string => `${url}/?token=${encodeURIComponent(token)}`;

/** The bridge's page with its token in the fragment: a browser sends a fragment to no server and in no Referer. */
export const bridgePageUrl = (page: string, token: string): string => `${page}/#token=${encodeURIComponent(token)}`;

export type InspectorBridgeOptions = {
  port: number;
  /** What every socket must carry (`?token=`): the one in the data dir's inspector-token file. */
  token: string;
  /** Where an error of the bridge's server once listening goes (it keeps serving, and the process runs on). */
  logger: Logger;
  /** The inspector's interface, embedded in the page (a local stand-in in tests). */
  inspectorUrl?: string;
  /** How many messages a page opened late is sent first (the actors they belong to are kept too). */
  keep?: number;
  /** What the page shows: `weir serve --inspect`'s records as they change, or `weir inspect`'s one record replayed. */
  showing?: 'live' | 'replay';
};

/**
 * The page an engineer opens to watch the machines, relaying Weir's inspection events to the Stately
 * inspector it embeds. `@statelyai/inspect`'s own bridge listens on every interface and lets any web
 * page's script open its socket; these events carry customers' data, so this one listens on loopback
 * only, answers only its own host names, takes sockets from its own page or from a process (no Origin),
 * and only with the token: any local process or user could open a loopback socket.
 */
export async function startInspectorBridge(options: InspectorBridgeOptions): Promise<InspectorBridge> {
  const inspectorUrl = new URL(options.inspectorUrl ?? STATELY_INSPECTOR_URL);
  const kept = keptMessages(options.keep ?? 2000);
  let port = options.port;
  const hosts = () => [`127.0.0.1:${port}`, `localhost:${port}`];
  const origins = () => hosts().map((host) => `http://${host}`);
  const expected = hashSecret(options.token);
  // In the query: neither a browser's WebSocket nor @statelyai/inspect's socket can set a header, and nothing here logs a URL.
  const tokenOf = (req: IncomingMessage) => new URL(req.url ?? '/', 'ws://bridge').searchParams.get('token') ?? '';

  const http = createServer((req, res) => {
    if (!hosts().includes(req.headers.host ?? '')) return answer(res, 421, 'text/plain', 'unknown host\n');
    if (req.method !== 'GET' && req.method !== 'HEAD') return answer(res, 405, 'text/plain', 'method not allowed\n');
    const path = new URL(req.url ?? '/', 'http://bridge').pathname;
    if (path === '/')
      return answer(
        res,
        200,
        'text/html; charset=utf-8',
        page(inspectorUrl, options.showing ?? 'live'),
        security(inspectorUrl, hosts()),
      );
    if (path === '/bridge.js') return answer(res, 200, 'text/javascript; charset=utf-8', SCRIPT);
    if (path === '/bridge.css') return answer(res, 200, 'text/css; charset=utf-8', STYLE);
    return answer(res, 404, 'text/plain', 'not found\n');
  });
  await new Promise<void>((resolve, reject) => {
    const failed = (error: NodeJS.ErrnoException) =>
      reject(
        error.code === 'EADDRINUSE'
          ? new Error(`the inspector's port ${options.port} is in use: choose another with --inspect PORT`)
          : error,
      );
    http.once('error', failed);
    http.listen(options.port, '127.0.0.1', () => {
      http.off('error', failed);
      resolve();
    });
  });
  port = (http.address() as AddressInfo).port;
  // Every connection, so a stop ends them all: one caught mid-upgrade (a page reconnecting) is in
  // neither ws's clients nor the server's idle ones, and would hold close() open for good.
  const connections = new Set<Socket>();
  http.on('connection', (connection: Socket) => {
    connections.add(connection);
    connection.once('close', () => connections.delete(connection));
  });
  // Once listening, an error (EMFILE on accept) is logged and the bridge goes on: an unheard one would end
  // the process. ws re-emits the server's errors: each is logged once.
  const logged = new WeakSet<Error>();
  const logError = (error: Error) => {
    if (logged.has(error)) return;
    logged.add(error);
    options.logger.error({ event: 'inspector.error', err: error }, `the inspector's bridge: ${error.message}`);
  };
  http.on('error', logError);
  // Made once listening: ws re-emits the server's errors, a taken port among them.
  const sockets = new WebSocketServer({
    server: http,
    verifyClient: ({ req }: { req: IncomingMessage }) =>
      hosts().includes(req.headers.host ?? '') &&
      (req.headers.origin === undefined || origins().includes(req.headers.origin)) &&
      secretsEqual(hashSecret(tokenOf(req)), expected),
  });
  sockets.on('error', logError);
  let pageOpened = () => {};
  const watched = new Promise<void>((resolve) => {
    pageOpened = resolve;
  });
  sockets.on('connection', (socket: WebSocket, req: IncomingMessage) => {
    // Weir's own socket comes from a process, with no Origin; a page's carries its own.
    if (req.headers.origin !== undefined) pageOpened();
    // A malformed frame ends that socket, never the process.
    socket.on('error', () => socket.terminate());
    for (const message of kept.replay()) socket.send(message);
    socket.on('message', (data) => {
      const message = String(data);
      kept.add(message);
      for (const other of sockets.clients) if (other !== socket && other.readyState === other.OPEN) other.send(message);
    });
  });
  return {
    page: `http://localhost:${port}`,
    url: `ws://127.0.0.1:${port}`,
    port,
    watched,
    stop: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets.clients) socket.terminate();
        sockets.close();
        http.close(() => resolve());
        for (const connection of connections) connection.destroy();
      }),
  };
}

function answer(
  res: ServerResponse,
  status: number,
  type: string,
  body: string | Buffer,
  headers: Record<string, string> = {},
): void {
  res.writeHead(status, { 'Content-Type': type, 'X-Content-Type-Options': 'nosniff', ...headers });
  res.end(body);
}

function security(inspector: URL, hosts: string[]): Record<string, string> {
  const policy = [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    `connect-src ${hosts.map((host) => `ws://${host}`).join(' ')}`,
    `frame-src ${inspector.origin}`,
    "frame-ancestors 'none'",
    "base-uri 'none'",
    "form-action 'none'",
  ].join('; ');
  return { 'Content-Security-Policy': policy, 'Referrer-Policy': 'no-referrer', 'Cache-Control': 'no-store' };
}

function page(inspector: URL, showing: 'live' | 'replay'): string {
  const src = inspector.href.replaceAll('&', '&amp;').replaceAll('"', '&quot;');
  const what = showing === 'live' ? 'statecharts, live' : 'a statechart, replayed';
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Weir: ${what}</title>
<link rel="stylesheet" href="/bridge.css">
<script src="/bridge.js" defer></script>
</head>
<body>
<header><strong>Weir</strong>, ${what}: <span id="count">no messages</span>, socket <span id="socket">connecting</span>.
The inspector below loads from ${inspector.host}; it stays blank where this browser cannot reach it.</header>
<section id="states" aria-label="Each record's state">
<p>Until the inspector answers, each record's state as Weir sends it:</p>
<table><thead><tr><th scope="col">Record (organization/environment)</th><th scope="col">Machine</th><th scope="col">State</th><th scope="col">Last event</th></tr></thead><tbody></tbody></table>
</section>
<iframe id="inspector" title="Stately inspector" src="${src}"></iframe>
</body>
</html>
`;
}

/**
 * The last `limit` messages, for a page opened late, and the actor message of every actor they name
 * (the inspector needs an actor's chart before its events), however long ago it came. Weir announces
 * a record once: the actor message of one whose messages all left is kept aside (up to `limit` of
 * them), for when its next event comes.
 */
function keptMessages(limit: number) {
  type Kept = { message: string; actor: string | null; isActor: boolean };
  const ring: Kept[] = [];
  const actors = new Map<string, { message: string; inRing: boolean; references: number }>();
  const aside = new Map<string, string>();
  return {
    add(message: string): void {
      const { actor, isActor } = describe(message);
      ring.push({ message, actor, isActor });
      if (actor) {
        const announced = aside.get(actor);
        aside.delete(actor);
        if (announced !== undefined && !isActor)
          actors.set(actor, { message: announced, inRing: false, references: 0 });
        const known = actors.get(actor);
        if (isActor) actors.set(actor, { message, inRing: true, references: (known?.references ?? 0) + 1 });
        else if (known) known.references += 1;
      }
      if (ring.length <= limit) return;
      const dropped = ring.shift();
      const known = dropped?.actor ? actors.get(dropped.actor) : undefined;
      if (!dropped?.actor || !known) return;
      if (dropped.isActor && dropped.message === known.message) known.inRing = false;
      known.references -= 1;
      if (known.references > 0) return;
      actors.delete(dropped.actor);
      aside.set(dropped.actor, known.message);
      // The oldest first: a Map iterates in insertion order.
      if (aside.size > limit) aside.delete(aside.keys().next().value as string);
    },
    replay(): string[] {
      const outside = [...actors.values()].filter((a) => !a.inRing).map((a) => a.message);
      return [...outside, ...ring.map((k) => k.message)];
    },
  };
}

function describe(message: string): { actor: string | null; isActor: boolean } {
  try {
    const parsed = JSON.parse(message) as { type?: unknown; sessionId?: unknown };
    const actor = typeof parsed.sessionId === 'string' ? parsed.sessionId : null;
    return { actor, isActor: parsed.type === '@xstate.actor' };
  } catch {
    return { actor: null, isActor: false };
  }
}
