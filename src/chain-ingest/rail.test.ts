import test from 'ava';
import type { Bus } from '../bus/bus.ts';
import type { RecoveryReads } from './payment-intents.ts';
import { combinedRecovery, type Rail, type RailRecoveryContext, type RecoveryRequest } from './rail.ts';
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
