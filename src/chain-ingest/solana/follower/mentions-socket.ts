import WebSocket from 'ws';
import type { Commitment } from '../define-network.ts';
import { endpointLabel } from '../../../shared/mask-userinfo.ts';

/** One `logsSubscribe({ mentions: [address] }, { commitment })`: a node takes one address per subscription. */
export type Mention = { address: string; commitment: Commitment };

export type MentionsSocketEvent = 'subscribed' | 'unsubscribed' | 'notification' | 'closed';

export type MentionsSocket = {
  /** Keeps exactly these subscriptions: new ones are asked for, those no longer wanted are dropped. */
  sync(wanted: readonly Mention[]): void;
  /** Whether the node has acknowledged the subscription of `address` at `commitment` on the open socket. */
  subscribed(mention: Mention): boolean;
  status(): { connected: boolean; subscribed: number; notifications: number; reconnects: number };
  close(): void;
};

const keyOf = (m: Mention) => `${m.address}@${m.commitment}`;

/**
 * Solana PubSub (`logsSubscribe` by mention) on one WebSocket, kept open: when it drops it is
 * opened again after a backoff (×2 from `minBackoffMs` up to `maxBackoffMs`, reset once open) and
 * every wanted subscription is asked for again. `onMention` only says that a transaction naming
 * `address` reached the commitment; what it pays is for the caller to read from the node.
 */
export function createMentionsSocket(deps: {
  url: string;
  onMention(address: string, signature: string): void;
  /** The node acknowledged a subscription: what landed before it may have gone unnotified. */
  onSubscribed?(address: string): void;
  onEvent?(event: MentionsSocketEvent): void;
  log(line: string): void;
  minBackoffMs?: number;
  maxBackoffMs?: number;
}): MentionsSocket {
  const minBackoff = deps.minBackoffMs ?? 250;
  const maxBackoff = deps.maxBackoffMs ?? 30_000;
  const wanted = new Map<string, Mention>();
  /** Acknowledged subscriptions: key to subscription id, and back. */
  const active = new Map<string, number>();
  const byId = new Map<number, Mention>();
  /** Requests awaiting their answer: request id to the subscription asked for (or dropped). */
  const requests = new Map<number, { kind: 'subscribe' | 'unsubscribe'; mention: Mention }>();
  const inFlight = new Set<string>();
  let socket: WebSocket | null = null;
  let open = false;
  let closed = false;
  let backoff = minBackoff;
  let timer: NodeJS.Timeout | null = null;
  let nextId = 1;
  let notifications = 0;
  let reconnects = 0;

  const send = (method: string, params: unknown[], kind: 'subscribe' | 'unsubscribe', mention: Mention) => {
    const id = nextId++;
    requests.set(id, { kind, mention });
    socket?.send(JSON.stringify({ jsonrpc: '2.0', id, method, params }));
  };

  const subscribe = (mention: Mention) => {
    inFlight.add(keyOf(mention));
    send('logsSubscribe', [{ mentions: [mention.address] }, { commitment: mention.commitment }], 'subscribe', mention);
  };

  function onMessage(data: WebSocket.RawData): void {
    let message: { id?: unknown; result?: unknown; error?: { message?: unknown }; method?: unknown; params?: unknown };
    try {
      message = JSON.parse(String(data));
    } catch {
      deps.log(`${endpointLabel(deps.url)} sent a message that is not JSON`);
      return;
    }
    if (message.method === 'logsNotification') {
      const params = message.params as { subscription?: unknown; result?: { value?: { signature?: unknown } } };
      const mention = typeof params?.subscription === 'number' ? byId.get(params.subscription) : undefined;
      const signature = params?.result?.value?.signature;
      if (mention === undefined || typeof signature !== 'string') return;
      notifications += 1;
      deps.onEvent?.('notification');
      deps.onMention(mention.address, signature);
      return;
    }
    const request = typeof message.id === 'number' ? requests.get(message.id) : undefined;
    if (request === undefined) return;
    requests.delete(message.id as number);
    const key = keyOf(request.mention);
    if (request.kind === 'unsubscribe') {
      deps.onEvent?.('unsubscribed');
      return;
    }
    inFlight.delete(key);
    if (typeof message.result !== 'number') {
      deps.log(`logsSubscribe ${key} refused: ${String(message.error?.message ?? 'no subscription id')}`);
      return;
    }
    const id = message.result;
    if (!wanted.has(key)) {
      send('logsUnsubscribe', [id], 'unsubscribe', request.mention);
      return;
    }
    active.set(key, id);
    byId.set(id, request.mention);
    deps.onEvent?.('subscribed');
    deps.onSubscribed?.(request.mention.address);
  }

  function connect(): void {
    timer = null;
    if (closed) return;
    const ws = new WebSocket(deps.url);
    socket = ws;
    ws.on('open', () => {
      open = true;
      backoff = minBackoff;
      for (const mention of wanted.values()) subscribe(mention);
    });
    ws.on('message', onMessage);
    ws.on('error', (error) => deps.log(`${endpointLabel(deps.url)}: ${error.message}`));
    ws.on('close', () => {
      if (socket !== ws) return;
      socket = null;
      open = false;
      active.clear();
      byId.clear();
      requests.clear();
      inFlight.clear();
      deps.onEvent?.('closed');
      if (closed) return;
      reconnects += 1;
      timer = setTimeout(connect, backoff);
      backoff = Math.min(maxBackoff, backoff * 2);
    });
  }

  connect();

  return {
    sync(list) {
      const next = new Map(list.map((m) => [keyOf(m), m]));
      for (const [key, mention] of wanted) {
        if (next.has(key)) continue;
        wanted.delete(key);
        const id = active.get(key);
        if (id === undefined) continue;
        active.delete(key);
        byId.delete(id);
        if (open) send('logsUnsubscribe', [id], 'unsubscribe', mention);
      }
      for (const [key, mention] of next) {
        if (wanted.has(key)) continue;
        wanted.set(key, mention);
        if (open && !inFlight.has(key)) subscribe(mention);
      }
    },
    subscribed: (mention) => active.has(keyOf(mention)),
    status: () => ({ connected: open, subscribed: active.size, notifications, reconnects }),
    close() {
      closed = true;
      if (timer) clearTimeout(timer);
      socket?.terminate();
      socket = null;
      open = false;
    },
  };
}
