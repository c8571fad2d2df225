import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { checkWebhookBody } from './response-check.ts';

export type ReceivedWebhook = { headers: IncomingHttpHeaders; body: string; at: number; answered: number | null };

/**
 * A local webhook receiver that records every request. Each body is checked against the OpenAPI
 * document's webhooks: a mismatch makes `waitFor` reject, failing the test that met it. `respond` decides each answer: a status
 * code, or `'hang'` to never answer (a receiver that times out or a process killed mid-request).
 */
export async function startWebhookReceiver(
  respond: (request: ReceivedWebhook, index: number) => number | 'hang' = () => 200,
) {
  const received: ReceivedWebhook[] = [];
  const waiters = new Set<() => void>();
  const mismatches: Error[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const request: ReceivedWebhook = {
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
        at: Date.now(),
        answered: null,
      };
      try {
        checkWebhookBody(request.body);
      } catch (error) {
        mismatches.push(error as Error);
      }
      const answer = respond(request, received.length);
      // Recorded before the waiters look, so a predicate on `answered` sees this request's answer.
      if (answer !== 'hang') request.answered = answer;
      received.push(request);
      for (const w of waiters) w();
      if (answer === 'hang') return;
      res.writeHead(answer, { 'content-type': 'text/plain' }).end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    received,
    /** Resolves when `predicate` holds for the requests received so far. */
    async waitFor(predicate: (all: ReceivedWebhook[]) => boolean, timeoutMs = 15_000): Promise<ReceivedWebhook[]> {
      if (mismatches[0]) throw mismatches[0];
      if (predicate(received)) return received;
      return new Promise((resolve, reject) => {
        const check = () => {
          if (mismatches[0]) {
            clearTimeout(timer);
            waiters.delete(check);
            reject(mismatches[0]);
          } else if (predicate(received)) {
            clearTimeout(timer);
            waiters.delete(check);
            resolve(received);
          }
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`webhook receiver: condition not met within ${timeoutMs} ms (${received.length} requests)`));
        }, timeoutMs);
        waiters.add(check);
      });
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
