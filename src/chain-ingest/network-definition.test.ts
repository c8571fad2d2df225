import test from 'ava';
import { devnetNetwork } from './evm/networks/devnet.ts';
import { base } from './evm/networks/base.ts';
import { explorerLinkOf, explorerTemplateOf } from './network-definition.ts';
import { toTronRailNetwork } from './tron/define-network.ts';
import { tronLocalNetwork, tronMainnet, tronNile } from './tron/networks.ts';

const HASH = `0x${'ab'.repeat(32)}`;

test("a transaction links to its network's explorer; a local chain's placeholder explorer (http://127.0.0.1/tx/…, nothing answers there) is no link", (t) => {
  t.is(explorerLinkOf({ kind: 'evm', explorerTxUrl: base.explorer.txUrl }, HASH), `https://basescan.org/tx/${HASH}`);
  const devnet = devnetNetwork({
    usdc: `0x${'1'.repeat(40)}`,
    usdt: `0x${'2'.repeat(40)}`,
    dai: `0x${'3'.repeat(40)}`,
  });
  t.is(explorerLinkOf({ kind: 'evm', explorerTxUrl: devnet.explorer.txUrl }, HASH), null);
  const tron = tronLocalNetwork({
    usdt: 'TSjxdduKVgnZpztqYQDzCw4dkgysvEWvv2',
    usdc: 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t',
  });
  t.is(explorerLinkOf({ kind: 'tron', explorerTxUrl: tron.explorer.txUrl }, HASH), null);
  t.is(
    explorerLinkOf({ kind: 'evm', explorerTxUrl: 'https://explorer.local.example/tx/{hash}' }, HASH),
    `https://explorer.local.example/tx/${HASH}`,
    'one given to the local chain is linked',
  );
  t.is(explorerLinkOf({ kind: 'evm', explorerTxUrl: '' }, HASH), null);
  // The template the API's chains and the hosted page give, by the same rule.
  t.is(explorerTemplateOf({ explorerTxUrl: base.explorer.txUrl }), 'https://basescan.org/tx/{hash}');
  t.is(explorerTemplateOf({ explorerTxUrl: devnet.explorer.txUrl }), null);
  t.is(explorerTemplateOf({ explorerTxUrl: tron.explorer.txUrl }), null);
});

test('a Tron transaction links to Tronscan by its bare txID, as Tronscan and Tron wallets write it, not the 0x form Weir keeps', (t) => {
  for (const network of [tronMainnet, tronNile]) {
    const rail = toTronRailNetwork(network);
    const link = explorerLinkOf(rail, HASH);
    t.is(link, network.explorer.txUrl.replace('{hash}', 'ab'.repeat(32)));
    t.notRegex(link ?? '', /0x/);
  }
  t.is(
    explorerLinkOf(toTronRailNetwork(tronMainnet), 'ab'.repeat(32)),
    `https://tronscan.org/#/transaction/${'ab'.repeat(32)}`,
  ); // The kind is required (tsc): a caller leaving it out would get a 0x… Tronscan link, which Tronscan does not open.
  const { kind: _kind, ...kindless } = toTronRailNetwork(tronMainnet);
  // @ts-expect-error -- no kind, no link
  t.truthy(() => explorerLinkOf(kindless, HASH));
});
