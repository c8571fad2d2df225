import test from 'ava';
import { AccountRole, generateKeyPairSigner, type Address } from '@solana/kit';
import { getTransferSolInstruction } from '@solana-program/system';
import { getCreateAssociatedTokenIdempotentInstruction, getTransferCheckedInstruction } from '@solana-program/token';
import { startTestSolana } from '../../../../test/support/solana-devnet.ts';
import type { Bus } from '../../../bus/bus.ts';
import { parseChainMessage, type ChainMessage } from '../../chain-messages.ts';
import { SOLANA_LOCALNET_CHAIN_ID, solanaLocalNetwork } from '../networks.ts';
import { withOperatorCommitment } from '../solana-setup.ts';
import { sessionReference } from '../pay-url.ts';
import { createSolanaJsonRpc, parseJsonWithBigInts, type SolanaJsonRpc } from './json-rpc.ts';
import { createSolanaFollower } from './solana-follower.ts';
import { createSolanaReferences } from './solana-references.ts';
import { slotBlockHash } from './solana-transfers.ts';

/** A follower of the local Solana whose published messages (and their ids) are kept. */
async function world(t: Parameters<typeof startTestSolana>[0], env: Record<string, string> = {}) {
  const chain = await startTestSolana(t);
  const network = withOperatorCommitment(solanaLocalNetwork(chain.server.ledger.mints), env);
  const references = createSolanaReferences();
  const published: { message: ChainMessage; id: string | undefined }[] = [];
  const bus = {
    publish: async (subject: string, data: Uint8Array, options?: { messageId?: string }) => {
      published.push({ message: parseChainMessage(subject, data), id: options?.messageId });
    },
  } as unknown as Bus;
  const rpc = createSolanaJsonRpc({ url: chain.server.rpcUrl });
  const follower = createSolanaFollower({ network, rpc, bus, references, pollIntervalMs: 1, log: () => undefined });
  const merchant = (await generateKeyPairSigner()).address;
  const watch = (session: string, mints: string[]) => {
    const reference = sessionReference({
      network: network.network,
      organizationId: 'org',
      checkoutSessionId: session,
      merchantAddress: merchant,
    });
    for (const address of mints)
      references.add({
        network: network.network,
        paymentAddress: reference,
        merchantAddress: merchant,
        asset: { address } as never,
        checkoutSessionId: session,
      });
    return reference;
  };
  return { chain, network, follower, published, merchant, watch, rpc };
}

test('a payment by reference: transfer at confirmed keyed by (signature, instruction), final at finalized, nothing twice', async (t) => {
  const w = await world(t);
  const usdc = w.chain.server.ledger.mints.usdc;
  const reference = w.watch('s1', [usdc]);
  const payer = await w.chain.newPayer();
  const signature = await payer.payToken(usdc, w.merchant, 2_500_000n, [reference]);
  await w.follower.poll();
  const [transfer] = w.published;
  t.is(w.published.length, 1);
  t.like(transfer!.message, {
    type: 'transfer',
    transactionHash: signature,
    logIndex: 1,
    amount: '2500000',
    reference,
    to: await w.chain.ata(w.merchant, usdc),
    from: payer.address,
  });
  await w.follower.poll();
  t.is(w.published.length, 1, 'a signature already seen is not read again (until)');
  t.is(w.follower.status().pending, 1);
  w.chain.server.ledger.finalize();
  await w.follower.poll();
  t.is(w.published.length, 2);
  const final = w.published[1]!;
  t.like(final.message, {
    type: 'final',
    blockHash: slotBlockHash((transfer!.message as { blockNumber: number }).blockNumber),
  });
  t.true(final.id?.endsWith(`:${signature}`), 'a final per signature: not dropped as a duplicate of the slot');
  t.is(w.follower.status().pending, 0);
});

test('a payment in a mint the session does not take publishes nothing; a dropped one is withdrawn once the cluster finalized past it', async (t) => {
  const w = await world(t);
  const { usdc, usdt } = w.chain.server.ledger.mints;
  const reference = w.watch('s2', [usdc]);
  const payer = await w.chain.newPayer();
  await payer.payToken(usdt, w.merchant, 1_000_000n, [reference]);
  await w.follower.poll();
  t.is(w.published.length, 0);
  const signature = await payer.payToken(usdc, w.merchant, 1_000_000n, [reference]);
  await w.follower.poll();
  t.is(w.published.length, 1);
  w.chain.server.ledger.drop(signature);
  await w.follower.poll();
  t.is(w.published.length, 1, 'not yet: the cluster has not finalized its slot');
  w.chain.server.ledger.finalize();
  await w.follower.poll();
  // Past finality: the matcher withdraws it for good, no session waits for it to come back.
  t.like(w.published[1]!.message, { type: 'reorg', final: true });
  t.is(w.follower.status().pending, 0);
});

test('idle references back off, and one batch serves every reference', async (t) => {
  const w = await world(t);
  for (let i = 0; i < 150; i++) w.watch(`idle-${i}`, ['native']);
  const before = w.rpc.counts();
  await w.follower.poll();
  const after = w.rpc.counts();
  t.is(after.calls - before.calls, 150);
  t.is(after.requests - before.requests, 2, 'batches of 100 calls');
});

test('parseJsonWithBigInts reads u64 beyond 2^53 exactly and leaves strings alone', (t) => {
  t.deepEqual(parseJsonWithBigInts('{"a":18446744073709551615,"b":"12345678901234567890","c":[1,2.5,-3]}'), {
    a: 18446744073709551615n,
    b: '12345678901234567890',
    c: [1, 2.5, -3],
  });
});

test('with the operator commitment confirmed,confirmed a payment is final as soon as it is seen', async (t) => {
  const w = await world(t, { [`WEIR_COMMITMENT_${SOLANA_LOCALNET_CHAIN_ID}`]: 'confirmed,confirmed' });
  const usdc = w.chain.server.ledger.mints.usdc;
  const reference = w.watch('s1', [usdc]);
  const payer = await w.chain.newPayer();
  const signature = await payer.payToken(usdc, w.merchant, 1_000_000n, [reference]);
  await w.follower.poll();
  t.deepEqual(
    w.published.map((p) => p.message.type),
    ['transfer', 'final'],
    'not waiting for finalized',
  );
  t.like(w.published[0]!.message, { transactionHash: signature });
  t.is(w.follower.status().pending, 0);
});

/**
 * A follower on a test clock (`at(ms)` moves it) with one USDC reference watched, keeping what it
 * publishes and what each round says the chain was read through.
 */
async function clockedWorld(
  t: Parameters<typeof startTestSolana>[0],
  options: { maxPollIntervalMs?: number; pageSize?: number; maxPages?: number },
  through: (rpc: SolanaJsonRpc) => SolanaJsonRpc = (rpc) => rpc,
) {
  const chain = await startTestSolana(t);
  const network = solanaLocalNetwork(chain.server.ledger.mints);
  const references = createSolanaReferences();
  const published: ChainMessage[] = [];
  const bus = {
    publish: async (subject: string, data: Uint8Array) => void published.push(parseChainMessage(subject, data)),
  } as unknown as Bus;
  let clock = 0;
  const rounds: (number | null)[] = [];
  const follower = createSolanaFollower({
    network,
    rpc: through(createSolanaJsonRpc({ url: chain.server.rpcUrl })),
    bus,
    references,
    pollIntervalMs: 1_000,
    ...options,
    now: () => clock,
    onRound: (through) => void rounds.push(through),
    log: () => undefined,
  });
  const merchant = (await generateKeyPairSigner()).address;
  const reference = sessionReference({
    network: network.network,
    organizationId: 'o',
    checkoutSessionId: 's',
    merchantAddress: merchant,
  });
  const usdc = chain.server.ledger.mints.usdc;
  references.add({
    network: network.network,
    paymentAddress: reference,
    merchantAddress: merchant,
    asset: { address: usdc } as never,
    checkoutSessionId: 's',
  });
  const at = (ms: number) => {
    clock = ms;
  };
  return { chain, follower, published, rounds, merchant, reference, usdc, at };
}

test('a round that skips a backed-off reference does not say the chain was read past that reference: an expiry waits for a payment made in time', async (t) => {
  const { chain, follower, published, rounds, merchant, reference, usdc, at } = await clockedWorld(t, {
    maxPollIntervalMs: 15_000,
  });
  await follower.poll();
  t.deepEqual(rounds, [0]);
  // Nothing found: the reference backs off to 1.5 s. The payer pays at 0.5 s (before an expiry at 1 s).
  at(500);
  await (await chain.newPayer()).payToken(usdc, merchant, 1_000_000n, [reference]);
  at(1_000);
  await follower.poll();
  t.is(published.length, 0, 'the reference was not due');
  t.true((rounds.at(-1) ?? 0) <= 0, `read through ${rounds.at(-1)} though the reference was last read at 0`);
  at(1_500);
  await follower.poll();
  t.like(published[0], { type: 'transfer', reference });
  t.is(rounds.at(-1), 1_500);
});

/** `count` transactions from the faucet naming `reference` that pay nothing (spam), each its own signature. */
async function spam(chain: Awaited<ReturnType<typeof startTestSolana>>, reference: string, count: number) {
  const sink = (await generateKeyPairSigner()).address;
  await chain.server.ledger.airdrop(sink, 1_000_000_000n);
  for (let i = 0; i < count; i++)
    await chain.server.ledger.sendInstructions([
      {
        // System Program transfer (2) of one lamport; the reference rides along read-only.
        programAddress: '11111111111111111111111111111111' as Address,
        data: new Uint8Array([2, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0]),
        accounts: [
          { address: chain.server.ledger.faucet, role: AccountRole.WRITABLE_SIGNER },
          { address: sink, role: AccountRole.WRITABLE },
          { address: reference as Address, role: AccountRole.READONLY },
        ],
      },
    ]);
}

test('an answer the follower cannot read is read again, not passed over: the payment in it is found', async (t) => {
  let garbled = 0;
  const { chain, follower, published, rounds, merchant, reference, usdc, at } = await clockedWorld(t, {}, (rpc) => ({
    ...rpc,
    async call<T>(method: string, params: unknown[]): Promise<T> {
      const answer = await rpc.call<T>(method, params);
      // A node (or a proxy before it) that once answers the transaction without its meta.
      if (method !== 'getTransaction' || answer === null || garbled++ > 0) return answer;
      return { ...(answer as object), meta: null } as T;
    },
  }));
  const signature = await (await chain.newPayer()).payToken(usdc, merchant, 1_000_000n, [reference]);
  await follower.poll();
  t.is(garbled, 1);
  t.is(published.length, 0);
  t.regex(follower.status().lastError ?? '', /cannot be read: the answer has no meta/);
  t.deepEqual(rounds, [null], 'the chain is not said read through while the reference holds an unread payment');
  at(1_000);
  await follower.poll();
  t.like(published[0], { type: 'transfer', transactionHash: signature, amount: '1000000' });
  t.deepEqual(rounds, [null, 1_000]);
});

test('a payment followed by more than a page (1000) of transactions naming its reference before the next poll is still found', async (t) => {
  const w = await world(t);
  const usdc = w.chain.server.ledger.mints.usdc;
  const reference = w.watch('s-spam', [usdc]);
  const payer = await w.chain.newPayer();
  const signature = await payer.payToken(usdc, w.merchant, 3_000_000n, [reference]);
  await spam(w.chain, reference, 1_000);
  const before = w.rpc.counts();
  await w.follower.poll();
  t.like(w.published[0]?.message, { type: 'transfer', transactionHash: signature, amount: '3000000' });
  // Two pages, 1001 transactions read 100 to a request, the payment's status: not a request per transaction.
  const requests = w.rpc.counts().requests - before.requests;
  t.true(requests <= 20, `${requests} HTTP requests for the round`);
  await w.follower.poll();
  t.is(w.published.length, 1, 'nothing read twice');
});

test('a backlog deeper than the pages of a round is read on over the next rounds, and the chain is said read only once it is', async (t) => {
  const { chain, follower, published, rounds, merchant, reference, usdc, at } = await clockedWorld(t, {
    pageSize: 2,
    maxPages: 2,
  });
  const payer = await chain.newPayer();
  const first = await payer.payToken(usdc, merchant, 1_000_000n, [reference]);
  await spam(chain, reference, 5);
  await follower.poll();
  t.is(published.length, 0, 'four signatures read, the payment below them not yet');
  t.deepEqual(rounds, [null], 'not read through while the backlog is open');
  at(1);
  const second = await payer.payToken(usdc, merchant, 2_000_000n, [reference]);
  await follower.poll();
  t.like(published[0], { type: 'transfer', transactionHash: first });
  t.deepEqual(rounds, [null, 1], 'the backlog was due at once and is closed');
  at(2_000);
  await follower.poll();
  t.deepEqual(
    published.filter((m) => m.type === 'transfer').map((m) => (m as { transactionHash: string }).transactionHash),
    [first, second],
    'what landed while the backlog was read is read next, once',
  );
});

for (const mints of [
  ['native', 'usdc'],
  ['usdc', 'native'],
] as const)
  test(`one transaction paying the reference in SOL and in USDC publishes both payments (session takes ${mints.join(', ')})`, async (t) => {
    const w = await world(t);
    const usdc = w.chain.server.ledger.mints.usdc;
    const reference = w.watch('s-two-mints', [...mints.map((m) => (m === 'usdc' ? usdc : m))]) as Address;
    const payer = await w.chain.newPayer();
    const destination = await w.chain.ata(w.merchant, usdc);
    const carrying = { address: reference, role: AccountRole.READONLY };
    const token = getTransferCheckedInstruction({
      source: await w.chain.ata(payer.address, usdc),
      mint: usdc,
      destination,
      authority: payer.signer,
      amount: 1_500_000n,
      decimals: 6,
    });
    const sol = getTransferSolInstruction({ source: payer.signer, destination: w.merchant, amount: 50_000_000n });
    const signature = await payer.send([
      getCreateAssociatedTokenIdempotentInstruction({
        payer: payer.signer,
        ata: destination,
        owner: w.merchant,
        mint: usdc,
      }),
      { ...token, accounts: [...token.accounts, carrying] },
      { ...sol, accounts: [...sol.accounts, carrying] },
    ]);
    await w.follower.poll();
    t.deepEqual(
      w.published.map(
        ({ message }) =>
          message.type === 'transfer' && [
            message.transactionHash,
            message.logIndex,
            message.asset.address,
            message.amount,
          ],
      ),
      [
        [signature, 1, usdc, '1500000'],
        [signature, 2, 'native', '50000000'],
      ],
    );
  });

test('finality is per signature: of two in one slot, the one final as failed is withdrawn and the other final, each naming its own', async (t) => {
  const w = await world(t);
  const usdc = w.chain.server.ledger.mints.usdc;
  const reference = w.watch('s-slot', [usdc]);
  const payer = await w.chain.newPayer();
  const [kept, failed] = await w.chain.server.ledger.sameSlot(async () => [
    await payer.payToken(usdc, w.merchant, 1_000_000n, [reference]),
    await payer.payToken(usdc, w.merchant, 2_000_000n, [reference]),
  ]);
  await w.follower.poll();
  const slots = w.published.map(({ message }) => message.type === 'transfer' && message.blockNumber);
  t.is(slots.length, 2);
  t.is(slots[0], slots[1], 'one slot');
  const slot = slots[0] as number;
  // A fork switch: the second lands again on the fork the cluster keeps, and fails there.
  w.chain.server.ledger.landAgainFailed(failed!);
  w.chain.server.ledger.finalize();
  await w.follower.poll();
  const settled = w.published.slice(2);
  t.deepEqual(
    settled.map(({ message }) => message),
    [
      {
        type: 'final',
        network: w.network.network,
        chainId: w.network.chainId,
        blockNumber: slot,
        blockHash: slotBlockHash(slot),
        transactionHash: kept,
        observedAt: settled[0]!.message.observedAt,
      },
      {
        type: 'reorg',
        network: w.network.network,
        chainId: w.network.chainId,
        removedBlocks: [{ number: slot, hash: slotBlockHash(slot) }],
        final: true,
        transactionHash: failed,
        observedAt: settled[1]!.message.observedAt,
      },
    ],
  );
  t.not(settled[0]!.id, undefined);
  t.not(settled[0]!.id, settled[1]!.id);
  t.is(w.follower.status().pending, 0);
});
