/**
 * The write floor for bench/http.ts: a bare Koa app whose POST reads the JSON body, inserts it as one
 * row into a SQLite file (better-sqlite3, WAL, synchronous=FULL: each insert is its own transaction
 * and fsync, on the event loop) and answers the row's id. What a durable write costs with nothing of
 * Weir around it; the session creates are measured against it.
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import Koa from 'koa';
import { serveParent } from './target-ipc.ts';

const dataDir = await mkdtemp(join(tmpdir(), 'weir-bench-floor-'));
const db = new Database(join(dataDir, 'floor.sqlite3'));
db.pragma('journal_mode = WAL');
db.pragma('synchronous = FULL');
db.exec('CREATE TABLE rows (position INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL UNIQUE, body TEXT NOT NULL)');
const insert = db.prepare<[string, string]>('INSERT INTO rows (id, body) VALUES (?, ?)');

const readBody = (req: NodeJS.ReadableStream): Promise<string> =>
  new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });

const app = new Koa();
app.use(async (ctx) => {
  const body = JSON.parse(await readBody(ctx.req)) as unknown;
  const id = randomUUID();
  insert.run(id, JSON.stringify(body));
  ctx.body = { id };
});
const server = createServer(app.callback());
server.keepAliveTimeout = 65_000;
server.listen(0, '127.0.0.1', () => {
  const { port } = server.address() as AddressInfo;
  serveParent(
    `http://127.0.0.1:${port}`,
    () =>
      new Promise<void>((resolve) => {
        server.close(() => {
          db.close();
          void rm(dataDir, { recursive: true, force: true }).then(() => resolve());
        });
        server.closeAllConnections();
      }),
  );
});
