import { connect, type Socket } from 'node:net';

/** What came back on one raw connection: the bytes, and whether the server ended the connection. */
export type RawExchange = {
  /** Everything the server sent, as text. */
  text: string;
  /** The status line of the last answer (after any `100 Continue`), such as `HTTP/1.1 413 Payload Too Large`. */
  statusLine: string;
  /** Every status line in order (`100 Continue` first when the server sent one). */
  statusLines: string[];
  /** The last answer's headers, names in lower case. */
  headers: Record<string, string>;
  /** The last answer's body. */
  body: string;
  /** The server closed the connection (FIN or reset) within the wait. */
  closedByServer: boolean;
};

/**
 * One HTTP/1.1 connection driven by hand, for what `fetch` hides: what the server does with the
 * socket. `send` writes to it; `exchange` resolves once the server closes the connection, or
 * `waitMs` after the last byte came in (a bound, never the thing asserted on: callers assert on
 * `closedByServer`).
 */
export function rawConnection(port: number, host = '127.0.0.1') {
  const socket: Socket = connect(port, host);
  const chunks: Buffer[] = [];
  let closed = false;
  const changed = new Set<() => void>();
  const notify = () => {
    for (const wake of changed) wake();
  };
  socket.on('data', (chunk: Buffer) => {
    chunks.push(chunk);
    notify();
  });
  // A reset is a close too (the server discards what it did not read); its bytes stay in `chunks`.
  socket.on('error', () => {});
  socket.on('close', () => {
    closed = true;
    notify();
  });
  const ready = new Promise<void>((resolve, reject) => {
    socket.once('connect', () => resolve());
    socket.once('error', reject);
  });

  const snapshot = (): RawExchange => {
    const text = Buffer.concat(chunks).toString('latin1');
    const statusLines = [...text.matchAll(/^HTTP\/1\.1 \d{3}[^\r\n]*/gm)].map((m) => m[0]);
    const last = text.lastIndexOf('HTTP/1.1 ');
    const answer = last < 0 ? '' : text.slice(last);
    const [head = '', body = ''] = answer.split('\r\n\r\n', 2);
    const headers: Record<string, string> = {};
    for (const line of head.split('\r\n').slice(1)) {
      const colon = line.indexOf(':');
      if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
    }
    return { text, statusLine: statusLines.at(-1) ?? '', statusLines, headers, body, closedByServer: closed };
  };

  return {
    async send(data: string | Buffer): Promise<void> {
      await ready;
      if (!socket.writable) return;
      await new Promise<void>((resolve) => socket.write(data, () => resolve()));
    },
    /** Resolves with what came back once `until` holds, the server closed, or `waitMs` passed without news. */
    exchange(until: (sofar: RawExchange) => boolean = () => false, waitMs = 5000): Promise<RawExchange> {
      return new Promise((resolve) => {
        let timer: NodeJS.Timeout;
        const check = () => {
          const sofar = snapshot();
          if (closed || until(sofar)) {
            clearTimeout(timer);
            changed.delete(check);
            resolve(sofar);
            return;
          }
          clearTimeout(timer);
          timer = setTimeout(() => {
            changed.delete(check);
            resolve(snapshot());
          }, waitMs);
        };
        changed.add(check);
        check();
      });
    },
    close: () => socket.destroy(),
  };
}
