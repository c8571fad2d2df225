import test from 'ava';
import type { Bus } from '../../bus/bus.ts';
import { chainSubject, encodeChainMessage, type ChainTransferMessage } from '../chain-messages.ts';
import { createWatchedAddresses } from '../watched-addresses.ts';
import { evmToTron } from './address.ts';
import { tronBus, tronWatched } from './tron-address-layer.ts';

const DEPOSIT = '0x52908400098527886e0f7030069857d2e4169ee7';
const PAYER = '0x8617e340b3d01fa5f11f306f4090fd50e238070d';
const TOKEN = '0xa614f803b6fd780986a42c78ec9c7f77e6ded13c';

const transfer = (overrides: Partial<ChainTransferMessage> = {}): ChainTransferMessage => ({
  type: 'transfer',
  network: 'tron-local',
  chainId: 1416785484,
  transactionHash: `0x${'ab'.repeat(32)}`,
  logIndex: 0,
  blockNumber: 7,
  blockHash: `0x${'cd'.repeat(32)}`,
  from: PAYER,
  to: DEPOSIT,
  asset: { address: TOKEN, symbol: 'USDT', decimals: 6 },
  amount: '5000000',
  reference: null,
  observedAt: '2026-11-28T00:00:00.000Z',
  ...overrides,
});

/** A bus that keeps what is published (the port's own contract, no consumers). */
function keepingBus() {
  const sent: { subject: string; message: unknown; messageId: string | undefined }[] = [];
  const bus: Bus = {
    publish: async (subject, data, options) =>
      void sent.push({
        subject,
        message: JSON.parse(Buffer.from(data).toString('utf8')),
        messageId: options?.messageId,
      }),
    consume: () => Promise.reject(new Error('not used')),
    deleteDurable: async () => {},
    close: async () => {},
  };
  return { bus, sent };
}

test('transfers leave on the bus with T… addresses and their id unchanged; T… ones pass as they are; other messages untouched', async (t) => {
  const { bus, sent } = keepingBus();
  const published = new Map<string, number>();
  const wrapped = tronBus(bus, 'tron-local', published);
  const message = transfer();
  const { subject, data, messageId } = encodeChainMessage(message);
  await wrapped.publish(subject, data, { messageId });
  const out = sent[0]!.message as ChainTransferMessage;
  t.is(out.to, evmToTron(DEPOSIT));
  t.is(out.from, evmToTron(PAYER));
  t.is(out.asset.address, 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t');
  t.is(sent[0]!.messageId, messageId);
  t.deepEqual([...published], [[`tron-local:${message.transactionHash}:0`, 7]]);
  // A recovery's transfer is T… already; a reconciliation's sender is no address.
  const again = transfer({ to: out.to, from: 'reconciliation', asset: out.asset, logIndex: 1 });
  const encoded = encodeChainMessage(again);
  await wrapped.publish(encoded.subject, encoded.data);
  t.deepEqual(sent[1]!.message, again);
  const final = Buffer.from('{"type":"final"}');
  await wrapped.publish(chainSubject('tron-local', 'final'), final);
  t.deepEqual(sent[2]!.message, { type: 'final' });
});

test('the follower asks the watched set by 0x address and is answered from the T… addresses', (t) => {
  const watched = createWatchedAddresses();
  watched.add('tron-local', evmToTron(DEPOSIT));
  const seen = tronWatched(watched);
  t.true(seen.has('tron-local', DEPOSIT));
  t.true(seen.has('tron-local', DEPOSIT.toUpperCase().replace('0X', '0x')));
  t.false(seen.has('tron-local', PAYER));
  t.false(seen.has('tron-mainnet', DEPOSIT));
  t.is(seen.size('tron-local'), 1);
});
