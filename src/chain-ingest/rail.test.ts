import test from 'ava';
import type { Bus } from '../bus/bus.ts';
import { shownAddress } from '../shared/evm-address.ts';
import type { RecoveryReads } from './payment-intents.ts';
import type { SessionAddress } from '../../machines/checkout-session.types.ts';
import { combineRails, combinedRecovery, type Rail, type RailRecoveryContext, type RecoveryRequest } from './rail.ts';
import { toSolanaRailNetwork } from './solana/define-network.ts';
import { SOLANA_NETWORKS } from './solana/networks.ts';
import { createSolanaRail } from './solana/solana-rail.ts';
import { TEST_NETWORK, createTestRail } from './test-rail.ts';

const context: RailRecoveryContext = {
  bus: {} as Bus,
  reads: {} as RecoveryReads,
  clock: { now: () => 0 },
  followers: new Map(),
  log: () => {},
};
const request = (chainId: number): RecoveryRequest => ({
  organizationId: 'org_1',
  environment: 'test',
  chainId,
  transactionHash: '0xabc',
});

/** A rail on one test network whose recovery answers with its own name. */
const railOn = (name: string, chainId: number): Rail => ({
  ...createTestRail(),
  name,
  networks: (environment) => (environment === 'test' ? [{ ...TEST_NETWORK, network: name, chainId }] : []),
  recovery: () => ({
    recover: async () => ({ outcome: 'wrong_claim', message: `${name} recovered` }),
  }),
});

test('recovery goes to the rail that offers the chain id; an unknown chain id to the first rail (its 400)', async (t) => {
  const recovery = combinedRecovery([railOn('alpha', 1), railOn('beta', 2)], context);
  t.is((await recovery!.recover(request(2))).message, 'beta recovered');
  t.is((await recovery!.recover(request(1))).message, 'alpha recovered');
  t.is((await recovery!.recover(request(99))).message, 'alpha recovered');
});

test('no recovery without a rail that recovers on a network it offers', (t) => {
  t.is(combinedRecovery([createTestRail()], context), undefined, 'the test rail has no recovery');
  const empty: Rail = { ...railOn('gamma', 3), networks: () => [] };
  t.is(combinedRecovery([empty], context), undefined, 'no network offered');
});

test("the payment request comes from the rail of the address's network: EIP-681 on EVM, Solana Pay with its words on Solana", async (t) => {
  const { generateKeyPairSigner } = await import('@solana/kit');
  const merchant = (await generateKeyPairSigner()).address;
  const reference = (await generateKeyPairSigner()).address;
  const solanaNetwork = SOLANA_NETWORKS.find((n) => n.chainId === 1399811151)!;
  const rails = combineRails([createTestRail(), createSolanaRail({ networks: [solanaNetwork] })]);
  const usdc = TEST_NETWORK.assets.find((a) => a.currency === 'usdc')!;
  const evm = rails.paymentRequest({
    address: {
      network: TEST_NETWORK.network,
      paymentAddress: '0x00000000000000000000000000000000000d3b05',
      asset: usdc,
    } as SessionAddress,
    amountDue: 1_750_000n,
    words: { label: 'Shop', message: 'Thing' },
  });
  t.deepEqual(evm, {
    uri: `ethereum:${shownAddress(usdc.address)}@7357/transfer?address=0x00000000000000000000000000000000000D3B05&uint256=1750000`,
    payee: '0x00000000000000000000000000000000000D3B05',
  });
  const solanaUsdc = toSolanaRailNetwork(solanaNetwork).assets.find((a) => a.currency === 'usdc')!;
  const solana = rails.paymentRequest({
    address: {
      network: solanaNetwork.network,
      paymentAddress: reference,
      merchantAddress: merchant,
      asset: solanaUsdc,
    } as unknown as SessionAddress,
    amountDue: 2_500_000n,
    words: { label: 'Corner Café', message: 'Coffee ×2' },
  });
  t.is(solana.payee, merchant, 'the wallet the money goes to, not the reference');
  t.is(
    solana.uri,
    `solana:${merchant}?amount=2.5&spl-token=${solanaUsdc.address}&reference=${reference}&label=Corner%20Caf%C3%A9&message=Coffee%20%C3%972`,
  );
  t.throws(
    () => rails.paymentRequest({ address: { network: 'nowhere' } as SessionAddress, amountDue: 1n, words: {} }),
    {
      message: 'no rail offers network nowhere',
    },
  );
});
