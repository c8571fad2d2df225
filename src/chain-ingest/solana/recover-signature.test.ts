import test from 'ava';
import type { Bus } from '../../bus/bus.ts';
import { UpstreamError } from '../../shared/errors.ts';
import type { RecoveryReads } from '../payment-intents.ts';
import type { SolanaJsonRpc } from './follower/json-rpc.ts';
import { solanaDevnet } from './networks.ts';
import { createSolanaTransactionRecovery } from './recover-signature.ts';

const SIGNATURE = '5'.repeat(88);

/** A node that answers getTransaction with `answer` and says the signature is finalized. */
const nodeAnswering = (answer: unknown): SolanaJsonRpc => ({
  async call<T>(method: string) {
    const reply = method === 'getTransaction' ? answer : { value: [{ confirmationStatus: 'finalized' }] };
    return reply as T;
  },
  counts: () => ({ calls: 0, requests: 0 }),
});

const noReads = {} as RecoveryReads; // never reached: the answer is refused before any session is read
const noBus = {} as Bus;

test('a getTransaction answer the node garbles (no meta, a shape it does not know) is a 502 naming the node, not a 500', async (t) => {
  for (const answer of [{ slot: 1, transaction: { signatures: [SIGNATURE] }, meta: null }, { slot: 'x' }]) {
    const recovery = createSolanaTransactionRecovery({
      networks: [{ network: solanaDevnet, rpc: nodeAnswering(answer) }],
      bus: noBus,
      reads: noReads,
      clock: { now: () => 0 },
    });
    const error = await t.throwsAsync(
      recovery.recover({
        organizationId: 'org',
        environment: 'test',
        chainId: solanaDevnet.chainId,
        transactionHash: SIGNATURE,
      }),
    );
    t.true(error instanceof UpstreamError, `${error?.name}: ${error?.message}`);
    t.regex(error!.message, /solana-devnet|answer/);
  }
});
