import test from 'ava';
import { generateKeyPairSigner } from '@solana/kit';
import WebSocket from 'ws';
import { startTestSolana } from '../../../../test/support/solana-devnet.ts';

/** A raw PubSub client: `ask` sends a request and resolves with its answer; notifications are queued. */
async function client(t: Parameters<typeof startTestSolana>[0], url: string) {
  const ws = new WebSocket(url);
  t.teardown(() => ws.terminate());
  await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
  const answers = new Map<number, (value: Record<string, unknown>) => void>();
  const notifications: Record<string, unknown>[] = [];
  let waiting: (() => void) | null = null;
  ws.on('message', (data) => {
    const message = JSON.parse(String(data)) as Record<string, unknown>;
    if (typeof message['id'] === 'number') answers.get(message['id'])?.(message);
    else {
      notifications.push(message);
      waiting?.();
    }
  });
  let id = 0;
  return {
    ask(method: string, params: unknown[]) {
      id += 1;
      const mine = id;
      return new Promise<Record<string, unknown>>((resolve) => {
        answers.set(mine, resolve);
        ws.send(JSON.stringify({ jsonrpc: '2.0', id: mine, method, params }));
      });
    },
    notifications,
    async next(count: number) {
      while (notifications.length < count) await new Promise<void>((resolve) => (waiting = resolve));
    },
  };
}

test('logsSubscribe by mention notifies at the commitment asked for, in the documented shape; logsUnsubscribe ends it', async (t) => {
  const chain = await startTestSolana(t, { arrival: 'processed' });
  const c = await client(t, chain.server.wsUrl);
  const reference = (await generateKeyPairSigner()).address;
  const merchant = (await generateKeyPairSigner()).address;
  const confirmed = await c.ask('logsSubscribe', [{ mentions: [reference] }, { commitment: 'confirmed' }]);
  const finalized = await c.ask('logsSubscribe', [{ mentions: [reference] }]);
  t.is(typeof confirmed['result'], 'number');
  t.is(chain.server.pubsub.subscriptions(), 2);
  const payer = await chain.newPayer();
  const signature = await payer.paySol(merchant, 1_000_000n, [reference]);
  chain.server.ledger.confirm();
  await c.next(1);
  const tx = chain.server.ledger.transaction(signature, 'processed')!;
  t.deepEqual(c.notifications[0], {
    jsonrpc: '2.0',
    method: 'logsNotification',
    params: {
      result: { context: { slot: Number(tx.slot) }, value: { signature, err: null, logs: tx.metaJson['logMessages'] } },
      subscription: confirmed['result'],
    },
  });
  chain.server.ledger.finalize();
  await c.next(2);
  t.like(c.notifications[1], { params: { subscription: finalized['result'], result: { value: { signature } } } });
  t.like(await c.ask('logsUnsubscribe', [confirmed['result']]), { result: true });
  t.like(await c.ask('logsUnsubscribe', [confirmed['result']]), { error: { code: -32602 } });
  t.is(chain.server.pubsub.subscriptions(), 1);
});

test('logsSubscribe takes exactly one mentioned address, as a node does', async (t) => {
  const chain = await startTestSolana(t);
  const c = await client(t, chain.server.wsUrl);
  const [a, b] = [(await generateKeyPairSigner()).address, (await generateKeyPairSigner()).address];
  t.like(await c.ask('logsSubscribe', [{ mentions: [a, b] }]), {
    error: { code: -32602, message: 'Invalid Request: Only 1 address supported' },
  });
  t.like(await c.ask('logsSubscribe', [{ mentions: ['not-an-address'] }]), { error: { code: -32602 } });
  t.like(await c.ask('logsSubscribe', [{ mentions: [a] }, { commitment: 'max' }]), { error: { code: -32602 } });
  t.like(await c.ask('accountSubscribe', [a]), { error: { code: -32601 } });
  t.is(chain.server.pubsub.subscriptions(), 0);
});
