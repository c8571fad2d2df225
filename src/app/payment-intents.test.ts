import test from 'ava';
import type { CommandHandler } from '../actors/command-handler.ts';
import { settledBlockKey } from '../projections/checkout-sessions.projection.ts';
import { COLLECTIONS, type ChainPaymentDoc, type SettledBlockDoc } from '../projections/collections.ts';
import { createEmbeddedReadStore } from '../read-store/embedded-read-store.ts';
import type { Collection, ReadDocument, ReadStore } from '../read-store/read-store.ts';
import { createPaymentIntents } from './payment-intents.ts';

const noCommands: CommandHandler = {
  handle: () => Promise.reject(new Error('no command is sent here')),
  load: () => Promise.reject(new Error('nothing is loaded here')),
};

/** Puts a settled chain payment and lists it under each block it was seen in, as the projection does. */
async function putSettled(
  readStore: ReadStore,
  doc: Pick<
    ChainPaymentDoc,
    '_id' | 'network' | 'blockNumber' | 'blockHash' | 'seenIn' | 'checkoutSessionId' | 'organizationId' | 'environment'
  >,
): Promise<void> {
  await readStore.collection<ChainPaymentDoc>(COLLECTIONS.chainPayments).put({ ...doc, status: 'settled' });
  const blocks = readStore.collection<SettledBlockDoc>(COLLECTIONS.settledBlocks);
  for (const { hash } of [{ hash: doc.blockHash }, ...(doc.seenIn ?? [])]) {
    const _id = settledBlockKey(doc.network, hash);
    const held = (await blocks.get(_id))?.transferIds ?? [];
    await blocks.put({ _id, network: doc.network, blockHash: hash.toLowerCase(), transferIds: [...held, doc._id] });
  }
}

test('finality and reorgs look transfers up once the read models hold the whole log: one recorded elsewhere (or before a kill) is found, not left pending', async (t) => {
  const readStore = createEmbeddedReadStore();
  const payments = readStore.collection<ChainPaymentDoc>(COLLECTIONS.chainPayments);
  const waited: bigint[] = [];
  // These read models reach the log's head (7) only when asked to: the transfer at height 5 arrives then.
  const projections = {
    async waitFor(position: bigint) {
      waited.push(position);
      await payments.put({
        _id: 'devnet:0xabc:0',
        network: 'devnet',
        blockNumber: 5,
        blockHash: '0xb5',
        status: 'pending',
        organizationId: 'org-1',
        environment: 'test',
        checkoutSessionId: 's-1',
      });
    },
  };
  const intents = createPaymentIntents({
    readStore,
    commands: noCommands,
    projections,
    eventStore: { headPosition: async () => 7n },
  });
  t.deepEqual(
    (await intents.pendingAtHeight('devnet', 5)).map((p) => p.transferId),
    ['devnet:0xabc:0'],
  );
  t.deepEqual(waited, [7n]);
  t.deepEqual(
    (await intents.pendingInBlocks('devnet', ['0xb5'])).map((p) => p.transferId),
    ['devnet:0xabc:0'],
  );
  t.deepEqual(waited, [7n, 7n]);
});

test('reorgs and finals find the transfers of a block named in another case, as the deciders compare hashes; another block never', async (t) => {
  const readStore = createEmbeddedReadStore();
  const payments = readStore.collection<ChainPaymentDoc>(COLLECTIONS.chainPayments);
  const tenant = { organizationId: 'org-1', environment: 'test', checkoutSessionId: 's-1' };
  await payments.put({
    _id: 'pending',
    network: 'devnet',
    blockNumber: 5,
    blockHash: '0xb5ab',
    status: 'pending',
    ...tenant,
  });
  await payments.put({
    _id: 'withdrawn',
    network: 'devnet',
    blockNumber: 6,
    blockHash: '0xb6ab',
    status: 'withdrawn',
    seenIn: [{ number: 5, hash: '0xB5CD' }],
    ...tenant,
  });
  const intents = createPaymentIntents({ readStore, commands: noCommands, projections: { waitFor: async () => {} } });
  const ids = (found: { transferId: string }[]) => found.map((p) => p.transferId);
  t.deepEqual(ids(await intents.pendingInBlocks('devnet', ['0xB5AB', '0xffff'])), ['pending']);
  // By hash alone (a height it was not seen at): the block it is in, or one it was in before.
  t.deepEqual(ids(await intents.withdrawnAtFinal('devnet', { number: 99, hash: '0xB6AB' })), ['withdrawn']);
  t.deepEqual(ids(await intents.withdrawnAtFinal('devnet', { number: 99, hash: '0xb5cd' })), ['withdrawn']);
  // A hash is matched whole, never as a pattern.
  t.deepEqual(ids(await intents.pendingInBlocks('devnet', ['0xb5a.', '0xb5'])), []);
  t.deepEqual(ids(await intents.withdrawnAtFinal('devnet', { number: 99, hash: '.*' })), []);
});

test('a final finds a pending transfer by any height it was seen at (a missed reorg moved it to another block), with the blocks it was seen in', async (t) => {
  const readStore = createEmbeddedReadStore();
  const payments = readStore.collection<ChainPaymentDoc>(COLLECTIONS.chainPayments);
  const tenant = { organizationId: 'org-1', environment: 'test', checkoutSessionId: 's-1' };
  await payments.put({
    _id: 'moved',
    network: 'devnet',
    blockNumber: 6,
    blockHash: '0xb6',
    status: 'pending',
    seenIn: [{ number: 5, hash: '0xa5' }],
    ...tenant,
  });
  await payments.put({
    _id: 'other',
    network: 'devnet',
    blockNumber: 7,
    blockHash: '0xb7',
    status: 'pending',
    ...tenant,
  });
  const intents = createPaymentIntents({ readStore, commands: noCommands, projections: { waitFor: async () => {} } });
  for (const height of [5, 6])
    t.deepEqual(await intents.pendingAtHeight('devnet', height), [
      { transferId: 'moved', blockNumber: 6, blockHash: '0xb6', seenIn: [{ number: 5, hash: '0xa5' }], ...tenant },
    ]);
  t.deepEqual(
    (await intents.pendingAtHeight('devnet', 4)).map((p) => p.transferId),
    [],
  );
});

test('a final finds a withdrawn transfer awaited back by any height it was seen at (mined again lower after a reorg), with the blocks it was seen in; a settled one only by a block it was seen in', async (t) => {
  const readStore = createEmbeddedReadStore();
  const payments = readStore.collection<ChainPaymentDoc>(COLLECTIONS.chainPayments);
  const tenant = { organizationId: 'org-1', environment: 'test', checkoutSessionId: 's-1' };
  await payments.put({
    _id: 'awaited',
    network: 'devnet',
    blockNumber: 5,
    blockHash: '0xb5',
    status: 'withdrawn',
    seenIn: [{ number: 6, hash: '0xa6' }],
    ...tenant,
  });
  await payments.put({
    _id: 'pending',
    network: 'devnet',
    blockNumber: 6,
    blockHash: '0xc6',
    status: 'pending',
    ...tenant,
  });
  // Given up by the final of its height: no final at its height reads it again, but one naming a
  // block it was seen in does (a reorg deeper than the confirmations brought that block back).
  await putSettled(readStore, {
    _id: 'settled',
    network: 'devnet',
    blockNumber: 6,
    blockHash: '0xd6',
    seenIn: [{ number: 5, hash: '0xd5' }],
    ...tenant,
  });
  const intents = createPaymentIntents({ readStore, commands: noCommands, projections: { waitFor: async () => {} } });
  const awaited = {
    transferId: 'awaited',
    blockNumber: 5,
    blockHash: '0xb5',
    seenIn: [{ number: 6, hash: '0xa6' }],
    ...tenant,
  };
  const settled = {
    transferId: 'settled',
    blockNumber: 6,
    blockHash: '0xd6',
    seenIn: [{ number: 5, hash: '0xd5' }],
    ...tenant,
  };
  const ids = async (block: { number: number; hash: string }) =>
    (await intents.withdrawnAtFinal('devnet', block)).map((p) => p.transferId).sort();
  for (const height of [5, 6]) t.deepEqual(await ids({ number: height, hash: '0xeeee' }), ['awaited']);
  t.deepEqual(await intents.withdrawnAtFinal('devnet', { number: 5, hash: '0xd5' }), [awaited, settled]);
  t.deepEqual(await ids({ number: 6, hash: '0xd6' }), ['awaited', 'settled']);
  t.deepEqual(await ids({ number: 7, hash: '0xD6' }), ['settled']);
  t.deepEqual(await ids({ number: 7, hash: '0xffff' }), []);
});

test('a final reads the settled transfers of its own block by its key (network and block), never the settled ones of every block and network', async (t) => {
  const store = createEmbeddedReadStore();
  const tenant = { organizationId: 'org-1', environment: 'test', checkoutSessionId: 's-1' };
  // Settled ones pile up on every network; one elsewhere is seen in a block of the same hash.
  for (let i = 0; i < 50; i++)
    await putSettled(store, { _id: `old-${i}`, network: 'devnet', blockNumber: i, blockHash: `0xa${i}`, ...tenant });
  await putSettled(store, { _id: 'here', network: 'devnet', blockNumber: 60, blockHash: '0xB60', ...tenant });
  await putSettled(store, { _id: 'elsewhere', network: 'othernet', blockNumber: 60, blockHash: '0xb60', ...tenant });
  // Listed under its block, then detected again in another: settled no more, never credited by the old block's final.
  await putSettled(store, { _id: 'again', network: 'devnet', blockNumber: 60, blockHash: '0xb60', ...tenant });
  const payments = store.collection<ChainPaymentDoc>(COLLECTIONS.chainPayments);
  await payments.put({ ...(await payments.get('again'))!, status: 'pending', blockNumber: 61, blockHash: '0xb61' });
  // What the final asks of the store: every query, and every document read by its key.
  const queried: string[] = [];
  const readStore: ReadStore = {
    ...store,
    collection<T extends ReadDocument>(name: string): Collection<T> {
      const collection = store.collection<T>(name);
      return {
        ...collection,
        get(id) {
          queried.push(`${name} get ${id}`);
          return collection.get(id);
        },
        find(filter, options) {
          queried.push(`${name} find ${String(filter['status'])}`);
          return collection.find(filter, options);
        },
      };
    },
  };
  const intents = createPaymentIntents({ readStore, commands: noCommands, projections: { waitFor: async () => {} } });
  t.deepEqual(
    (await intents.withdrawnAtFinal('devnet', { number: 60, hash: '0xb60' })).map((p) => p.transferId),
    ['here'],
  );
  t.deepEqual(queried.sort(), [
    'chain_payments find withdrawn',
    'chain_payments get again',
    'chain_payments get here',
    `settled_blocks get ${settledBlockKey('devnet', '0xb60')}`,
  ]);
  t.deepEqual(
    (await intents.withdrawnAtFinal('othernet', { number: 60, hash: '0xB60' })).map((p) => p.transferId),
    ['elsewhere'],
  );
  t.deepEqual(await intents.withdrawnAtFinal('devnet', { number: 60, hash: '0xc60' }), []);
});
