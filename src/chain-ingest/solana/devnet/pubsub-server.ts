import type { Server } from 'node:http';
import { isAddress } from '@solana/kit';
import { WebSocketServer, type WebSocket } from 'ws';
import type { Commitment } from '../define-network.ts';
import type { LocalSolana } from './local-ledger.ts';

type Subscription = { socket: WebSocket; address: string; commitment: Commitment };

export type LocalSolanaPubSub = {
  /** Live subscriptions (tests wait on it). */
  subscriptions(): number;
  /** Closes every socket (as a node restarting would); clients may connect again. */
  dropConnections(): void;
  /** While true, notifications are not sent (as a provider sometimes drops them); subscriptions stay. */
  dropNotifications(drop: boolean): void;
  stop(): Promise<void>;
};

/**
 * Solana's PubSub JSON-RPC on the local node's HTTP server (the WebSocket upgrade of the same
 * port): `logsSubscribe` with `{ mentions: [address] }` (exactly one address, as a node requires)
 * and a commitment (default `finalized`), answered with a subscription id; `logsUnsubscribe(id)`;
 * a `logsNotification` per transaction naming the address once it reaches that commitment.
 */
export function attachLocalSolanaPubSub(server: Server, ledger: LocalSolana): LocalSolanaPubSub {
  const wss = new WebSocketServer({ server });
  const subscriptions = new Map<number, Subscription>();
  let nextId = 1;
  let dropping = false;

  const off = ledger.onReached((commitment, txs) => {
    if (dropping) return;
    for (const [id, sub] of subscriptions) {
      if (sub.commitment !== commitment) continue;
      for (const tx of txs) {
        if (!tx.accountKeys.includes(sub.address as never)) continue;
        const logs = (tx.metaJson['logMessages'] as string[] | undefined) ?? null;
        sub.socket.send(
          JSON.stringify({
            jsonrpc: '2.0',
            method: 'logsNotification',
            params: {
              result: { context: { slot: Number(tx.slot) }, value: { signature: tx.signature, err: tx.err, logs } },
              subscription: id,
            },
          }),
        );
      }
    }
  });

  wss.on('connection', (socket) => {
    socket.on('message', (data) => {
      let call: { id?: unknown; method?: unknown; params?: unknown };
      try {
        call = JSON.parse(String(data));
      } catch {
        socket.send(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error' } }));
        return;
      }
      const id = call.id ?? null;
      const reply = (body: Record<string, unknown>) => socket.send(JSON.stringify({ jsonrpc: '2.0', id, ...body }));
      const invalid = (message: string) => reply({ error: { code: -32602, message } });
      const params = Array.isArray(call.params) ? call.params : [];
      if (call.method === 'logsSubscribe') {
        const filter = params[0] as { mentions?: unknown } | undefined;
        const mentions = typeof filter === 'object' && filter !== null ? filter.mentions : undefined;
        if (!Array.isArray(mentions))
          return invalid('Invalid params: the local node supports only the { mentions: [address] } filter');
        if (mentions.length !== 1) return invalid('Invalid Request: Only 1 address supported');
        const address = mentions[0];
        if (typeof address !== 'string' || !isAddress(address))
          return invalid('Invalid Request: Invalid pubkey provided');
        const config = params[1] as { commitment?: unknown } | undefined;
        const commitment = config?.commitment ?? 'finalized';
        if (commitment !== 'processed' && commitment !== 'confirmed' && commitment !== 'finalized')
          return invalid(`Invalid params: unknown commitment ${JSON.stringify(commitment)}`);
        const subscription = nextId++;
        subscriptions.set(subscription, { socket, address, commitment });
        return reply({ result: subscription });
      }
      if (call.method === 'logsUnsubscribe') {
        const subscription = params[0];
        const known = typeof subscription === 'number' && subscriptions.get(subscription)?.socket === socket;
        if (!known) return invalid('Invalid subscription id.');
        subscriptions.delete(subscription);
        return reply({ result: true });
      }
      return reply({ error: { code: -32601, message: 'Method not found' } });
    });
    socket.on('close', () => {
      for (const [id, sub] of subscriptions) if (sub.socket === socket) subscriptions.delete(id);
    });
  });

  return {
    subscriptions: () => subscriptions.size,
    dropConnections() {
      for (const client of wss.clients) client.terminate();
    },
    dropNotifications(drop) {
      dropping = drop;
    },
    stop() {
      off();
      for (const client of wss.clients) client.terminate();
      return new Promise((resolve) => wss.close(() => resolve()));
    },
  };
}
