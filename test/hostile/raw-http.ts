import { Agent, request as httpRequest, type IncomingHttpHeaders } from 'node:http';

/** A request exactly as it goes on the wire: any method token, a path sent unnormalised, raw body bytes. */
export type RawRequest = {
  method: string;
  /** Sent as written (`..`, `%2e`, `//` kept); only bytes \x21-\xff are possible here. */
  path: string;
  headers: Record<string, string>;
  body?: Buffer;
  /** Send the body with chunked transfer encoding instead of a Content-Length. */
  chunked?: boolean;
  /** On a connection of its own, destroyed afterwards (for requests that may leave a connection unusable). */
  ownConnection?: boolean;
};

export type RawResponse =
  | {
      kind: 'answered';
      status: number;
      headers: IncomingHttpHeaders;
      /** The first 64 KiB of the body. */
      text: string;
      ms: number;
    }
  | { kind: 'timeout'; ms: number }
  | { kind: 'error'; error: string; ms: number };

const KEPT_BODY_BYTES = 64 * 1024;

/**
 * A client for hostile requests: `fetch` refuses methods such as TRACE, normalises `..` out of
 * paths and sets headers of its own, so requests go out through `node:http` as they are given.
 */
export function rawHttp(baseUrl: string, timeoutMs: number) {
  const { hostname, port } = new URL(baseUrl);
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });

  /** On a connection of its own that the client does not ask to close, so the answer's Connection header is the server's choice. */
  async function sendAlone(req: RawRequest): Promise<RawResponse> {
    const alone = new Agent({ keepAlive: true, maxSockets: 1 });
    try {
      return await send(req, alone);
    } finally {
      alone.destroy();
    }
  }

  function send(req: RawRequest, viaAgent: Agent = agent): Promise<RawResponse> {
    if (req.ownConnection && viaAgent === agent) return sendAlone(req);
    const started = performance.now();
    const ms = () => Math.round(performance.now() - started);
    return new Promise((resolve) => {
      let settled = false;
      const settle = (response: RawResponse) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolve(response);
      };
      const headers: Record<string, string> = { ...req.headers };
      if (req.body && !req.chunked) headers['content-length'] = String(req.body.length);
      let outgoing: ReturnType<typeof httpRequest>;
      try {
        outgoing = httpRequest({ host: hostname, port, method: req.method, path: req.path, headers, agent: viaAgent });
      } catch (error) {
        // Node refused to send it (a header value it will not write): not the server's doing.
        resolve({ kind: 'error', error: `not sent: ${(error as Error).message}`, ms: ms() });
        return;
      }
      const timer = setTimeout(() => {
        settle({ kind: 'timeout', ms: ms() });
        outgoing.destroy();
      }, timeoutMs);
      outgoing.on('response', (res) => {
        const chunks: Buffer[] = [];
        let kept = 0;
        res.on('data', (chunk: Buffer) => {
          if (kept < KEPT_BODY_BYTES) {
            chunks.push(chunk);
            kept += chunk.length;
          }
        });
        res.on('end', () =>
          settle({
            kind: 'answered',
            status: res.statusCode ?? 0,
            headers: res.headers,
            text: Buffer.concat(chunks).subarray(0, KEPT_BODY_BYTES).toString('utf8'),
            ms: ms(),
          }),
        );
        res.on('error', (error) => settle({ kind: 'error', error: error.message, ms: ms() }));
      });
      outgoing.on('error', (error) => settle({ kind: 'error', error: error.message, ms: ms() }));
      if (req.body) outgoing.end(req.body);
      else outgoing.end();
    });
  }

  return { send, close: () => agent.destroy() };
}
