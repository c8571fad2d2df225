import test from 'ava';
import { sessionFixture } from '../../machines/checkout-session.fixture.ts';
import type { SessionAddress } from '../../machines/checkout-session.types.ts';
import { toTronRailNetwork } from '../chain-ingest/tron/define-network.ts';
import { TRON_LOCAL_CHAIN_ID, tronLocalNetwork } from '../chain-ingest/tron/networks.ts';
import { renderTronWalletActions } from './tron-wallet-actions.ts';

const tokens = { usdt: 'TNPeeaaFB7K9cmo4uQpcU32zGK8G1NYqeL', usdc: 'TBDCyrZ1hT1PDDFf2yRABwPrFica5qqPUX' };
const local = toTronRailNetwork(tronLocalNetwork(tokens));
const tronUsdt: SessionAddress = {
  ...sessionFixture().addresses[0]!,
  id: 'addr-tron-usdt',
  network: 'tron-local',
  asset: local.assets.find((a) => a.currency === 'usdt')!,
  paymentAddress: 'TWd4WrZ9wn84f5x1hZhL4DHvk738ns5jwb',
};
const session = sessionFixture({ addresses: [tronUsdt] });
const context = { networks: [local], devnet: null, tronDevnet: { chainId: TRON_LOCAL_CHAIN_ID } };

test('"Pay with test wallet" is offered beside TronLink on a test session with the local Tron only, never in live, without it, or once over', (t) => {
  const html = renderTronWalletActions(session, context);
  t.regex(html, /Pay with TronLink/);
  t.regex(html, /data-tron-action="test" hidden>Pay with test wallet/);
  t.regex(
    html,
    /data-address="addr-tron-usdt"[^>]*data-to="TWd4WrZ9wn84f5x1hZhL4DHvk738ns5jwb"[^>]*data-test-wallet="true"/,
  );

  t.notRegex(
    renderTronWalletActions(sessionFixture({ addresses: [tronUsdt], environment: 'live' }), context),
    /test wallet/,
  );
  const without = renderTronWalletActions(session, { ...context, tronDevnet: null });
  t.regex(without, /Pay with TronLink/);
  t.notRegex(without, /test wallet|data-test-wallet="true"/);
  t.is(renderTronWalletActions(sessionFixture({ addresses: [tronUsdt], status: 'complete' }), context), '');
});
