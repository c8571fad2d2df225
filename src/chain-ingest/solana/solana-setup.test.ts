import test from 'ava';
import { SOLANA_NETWORKS } from './networks.ts';
import { loadSolanaSetup, SolanaConfigError, withOperatorCommitment } from './solana-setup.ts';

const mainnet = SOLANA_NETWORKS.find((n) => n.chainId === 1399811149)!;

test('WEIR_COMMITMENT_<chainId> sets the levels a payment is seen and final at, and says where they come from', (t) => {
  const network = withOperatorCommitment(mainnet, { WEIR_COMMITMENT_1399811149: 'processed, confirmed' });
  t.deepEqual(network.commitment, { seen: 'processed', final: 'confirmed' });
  t.is(network.commitmentSource, 'WEIR_COMMITMENT_1399811149 (operator setting)');
  t.is(network.network, mainnet.network);
  t.is(withOperatorCommitment(mainnet, {}), mainnet, 'unset: the network as defined');
});

test('a commitment setting that cannot be used is refused, naming the variable', (t) => {
  for (const [value, message] of [
    ['finalized', /must be two commitment levels/],
    ['confirmed,finalized,finalized', /must be two commitment levels/],
    ['confirmed,final', /WEIR_COMMITMENT_1399811149: .*commitment levels must be processed, confirmed, finalized/],
    ['finalized,confirmed', /WEIR_COMMITMENT_1399811149: .*must be at least as strong/],
  ] as const) {
    const error = t.throws(() => withOperatorCommitment(mainnet, { WEIR_COMMITMENT_1399811149: value }), {
      instanceOf: SolanaConfigError,
    });
    t.regex(error.message, message, value);
  }
});

test('an offered network carries the operator commitment', async (t) => {
  const offered = await loadSolanaSetup({
    env: { WEIR_RPC_1399811149: 'https://solana.example/rpc', WEIR_COMMITMENT_1399811149: 'confirmed,confirmed' },
  });
  t.is(offered.length, 1);
  t.deepEqual(offered[0]!.network.commitment, { seen: 'confirmed', final: 'confirmed' });
});
