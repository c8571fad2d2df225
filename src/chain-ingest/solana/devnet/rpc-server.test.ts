import test, { type ExecutionContext } from 'ava';
import { readFileSync } from 'node:fs';
import {
  createSolanaRpc,
  generateKeyPairSigner,
  getAddressEncoder,
  lamports,
  type Address,
  type Signature,
} from '@solana/kit';
import { type SendOptions, startTestSolana } from '../../../../test/support/solana-devnet.ts';
import { merchantWalletProblem } from '../address.ts';
import { newReference } from '../pay-url.ts';
import { validateSolanaTransfer } from '../validate-transfer.ts';
import { startLocalSolana } from './rpc-server.ts';

async function localSolana(t: ExecutionContext) {
  const solana = await startTestSolana(t, { now: () => 1_767_225_600_000 });
  const payer = await solana.newPayer();
  const merchant = (await generateKeyPairSigner()).address;
  const usdc = solana.server.ledger.mints.usdc;
  return {
    ...solana,
    payer,
    merchant,
    usdc,
    ata: (owner: Address) => solana.ata(owner, usdc),
    payUsdc: (amount: bigint, references: Address[], options: SendOptions = {}) =>
      payer.payToken(usdc, merchant, amount, references, options),
  };
}

test('a USDC transfer carrying a reference is found by getSignaturesForAddress and validates as a payment', async (t) => {
  const { server, rpc, merchant, usdc, ata, payUsdc, getTransaction } = await localSolana(t);
  const reference = newReference();
  const signature = await payUsdc(1_500_000n, [reference]);

  const confirmed = await rpc.getSignaturesForAddress(reference, { commitment: 'confirmed' }).send();
  t.is(confirmed.length, 1);
  t.like(confirmed[0], { signature, err: null, confirmationStatus: 'confirmed', blockTime: 1_767_225_600n });
  t.deepEqual(await rpc.getSignaturesForAddress(reference, { commitment: 'finalized' }).send(), []);

  const answer = await getTransaction(signature);
  const check = await validateSolanaTransfer(answer, { recipient: merchant, mint: usdc, references: [reference] });
  if (!check.valid) return t.fail(check.message);
  t.like(check.payments, [
    { id: `${signature}:1`, instructionIndex: 1, amount: 1_500_000n, mint: usdc, destination: await ata(merchant) },
  ]);
  t.is(
    answer?.meta?.preTokenBalances?.length,
    1,
    'the merchant ATA had no balance before: created in this transaction',
  );
  t.is(String((await rpc.getTokenAccountBalance(await ata(merchant)).send()).value.uiAmountString), '1.5');
  t.is(await getTransaction(signature, 'finalized'), null, 'not finalized yet');

  server.ledger.finalize();
  const [finalized] = await rpc.getSignaturesForAddress(reference, { commitment: 'finalized' }).send();
  t.like(finalized, { signature, confirmationStatus: 'finalized' });
  const { value } = await rpc.getSignatureStatuses([signature]).send();
  t.like(value[0], { confirmationStatus: 'finalized', confirmations: null, err: null });
  t.not(await getTransaction(signature, 'finalized'), null);
});

test('a transaction that stays confirmed and is dropped disappears and its balances move back', async (t) => {
  const { server, rpc, merchant, ata, payUsdc, getTransaction } = await localSolana(t);
  const kept = await payUsdc(1_000_000n, [newReference()]);
  const reference = newReference();
  const dropped = await payUsdc(2_000_000n, [reference]);
  server.ledger.finalize((await getTransaction(kept))?.slot);
  t.is(String((await rpc.getTokenAccountBalance(await ata(merchant)).send()).value.amount), '3000000');

  server.ledger.drop(dropped);
  t.deepEqual(await rpc.getSignaturesForAddress(reference, { commitment: 'confirmed' }).send(), []);
  t.is(await getTransaction(dropped), null);
  t.deepEqual((await rpc.getSignatureStatuses([dropped]).send()).value, [null]);
  t.is(String((await rpc.getTokenAccountBalance(await ata(merchant)).send()).value.amount), '1000000');
  server.ledger.finalize();
  t.is(await getTransaction(dropped, 'finalized'), null, 'a dropped transaction never finalizes');
  t.throws(() => server.ledger.drop(kept), { message: /is finalized/ });
});

test('getSignaturesForAddress pages newest first with limit, before and until', async (t) => {
  const { rpc, payUsdc } = await localSolana(t);
  const reference = newReference();
  const [a, b, c] = [await payUsdc(1n, [reference]), await payUsdc(2n, [reference]), await payUsdc(3n, [reference])];
  const page = async (options: { limit?: number; before?: Signature; until?: Signature }) =>
    (await rpc.getSignaturesForAddress(reference, { commitment: 'confirmed', ...options }).send()).map(
      (s) => s.signature,
    );
  t.deepEqual(await page({}), [c, b, a]);
  t.deepEqual(await page({ limit: 2 }), [c, b]);
  t.deepEqual(await page({ before: b }), [a]);
  t.deepEqual(await page({ until: a }), [c, b]);
  t.deepEqual(await page({ before: c, until: a }), [b]);
});

test('a failing transfer is refused at preflight; sent without preflight it lands failed and is no payment', async (t) => {
  const { rpc, merchant, usdc, payUsdc, getTransaction } = await localSolana(t);
  const reference = newReference();
  const error = await t.throwsAsync(payUsdc(1_000_000_000_000n, [reference]));
  t.regex(error.message, /simulation failed|custom program error: 0x1/i);
  t.deepEqual(await rpc.getSignaturesForAddress(reference, { commitment: 'confirmed' }).send(), []);

  const signature = await payUsdc(1_000_000_000_000n, [reference], { skipPreflight: true });
  const [listed] = await rpc.getSignaturesForAddress(reference, { commitment: 'confirmed' }).send();
  t.deepEqual(listed?.err, { InstructionError: [1n, { Custom: 1n }] }, 'kit reads the numbers as bigints');
  const check = await validateSolanaTransfer(await getTransaction(signature), {
    recipient: merchant,
    mint: usdc,
    references: [reference],
  });
  t.like(check, { valid: false, reason: 'failed' });
});

test('a SOL payment by reference credits the merchant wallet', async (t) => {
  const { rpc, payer, merchant, getTransaction } = await localSolana(t);
  const reference = newReference();
  const signature = await payer.paySol(merchant, 250_000_000n, [reference]);
  const [found] = await rpc.getSignaturesForAddress(reference, { commitment: 'confirmed' }).send();
  t.is(found?.signature, signature);
  const check = await validateSolanaTransfer(await getTransaction(signature), {
    recipient: merchant,
    mint: 'native',
    references: [reference],
  });
  t.like(check.valid && check.payments[0], { mint: 'native', amount: 250_000_000n, destination: merchant });
  t.is((await rpc.getBalance(merchant).send()).value, lamports(250_000_000n));
});

test('a versioned transaction through a lookup table reports loadedAddresses and validates', async (t) => {
  const { server, merchant, usdc, ata, payUsdc, getTransaction } = await localSolana(t);
  const table = newReference();
  const addresses = [await ata(merchant), usdc];
  // An address lookup table account as the program writes it: active (deactivation slot u64::MAX), extended at slot 0.
  const data = new Uint8Array(56 + 32 * addresses.length);
  const view = new DataView(data.buffer);
  view.setUint32(0, 1, true);
  view.setBigUint64(4, 0xffff_ffff_ffff_ffffn, true);
  for (const [i, address] of addresses.entries()) data.set(getAddressEncoder().encode(address), 56 + 32 * i);
  server.ledger.svm.setAccount({
    address: table,
    data,
    executable: false,
    lamports: lamports(server.ledger.svm.minimumBalanceForRentExemption(BigInt(data.length))),
    programAddress: 'AddressLookupTab1e1111111111111111111111111' as Address,
    space: BigInt(data.length),
  });
  await payUsdc(1n, []); // creates the merchant ATA, so the paying transaction can load it as writable
  const reference = newReference();
  const signature = await payUsdc(4_000_000n, [reference], { lookupTables: { [table]: addresses } });
  const answer = await getTransaction(signature);
  t.deepEqual(answer?.meta?.loadedAddresses, { writable: [await ata(merchant)], readonly: [usdc] });
  const message = answer?.transaction.message;
  t.is(message && 'addressTableLookups' in message ? message.addressTableLookups?.[0]?.accountKey : undefined, table);
  const check = await validateSolanaTransfer(answer, { recipient: merchant, mint: usdc, references: [reference] });
  t.like(check.valid && check.payments[0], { amount: 4_000_000n, destination: await ata(merchant) });
});

test('getTransaction of a v0 transaction without maxSupportedTransactionVersion is refused as a node does', async (t) => {
  const { server, payUsdc } = await localSolana(t);
  const signature = await payUsdc(1n, []);
  const response = await fetch(server.rpcUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 7,
      method: 'getTransaction',
      params: [signature, { commitment: 'confirmed' }],
    }),
  });
  t.like(await response.json(), { id: 7, error: { code: -32015 } });
});

test('the control methods are reachable over JSON-RPC', async (t) => {
  const { server, rpc, merchant } = await localSolana(t);
  const call = async (method: string, params: unknown[]) =>
    (await (
      await fetch(server.rpcUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
      })
    ).json()) as { result?: unknown; error?: { message: string } };
  const info = await call('weir_info', []);
  t.deepEqual(info.result, { faucet: server.ledger.faucet, mints: server.ledger.mints });
  const minted = await call('weir_mintTo', [merchant, 'usdt', '5000000']);
  t.is(typeof minted.result, 'string');
  t.is(
    (await rpc.getSlot({ commitment: 'finalized' }).send()) < (await rpc.getSlot({ commitment: 'confirmed' }).send()),
    true,
  );
  await call('weir_finalize', []);
  t.is(await rpc.getSlot({ commitment: 'finalized' }).send(), await rpc.getSlot({ commitment: 'processed' }).send());
  t.regex((await call('weir_mintTo', [merchant, 'dai', '1'])).error?.message ?? '', /"usdc" or "usdt"/);
});

/** Every key path of a JSON value, array items merged under `[]`, for comparing shapes. */
function shape(value: unknown, path = ''): string[] {
  if (Array.isArray(value)) return [`${path}[]`, ...value.flatMap((item) => shape(item, `${path}[]`))];
  if (typeof value === 'object' && value !== null)
    return Object.entries(value).flatMap(([key, v]) => [`${path}.${key}`, ...shape(v, `${path}.${key}`)]);
  return [];
}

test('getTransaction answers in the shape of the documented fixtures', async (t) => {
  const { server, payUsdc } = await localSolana(t);
  const signature = await payUsdc(1_500_000n, [newReference()]);
  const response = await fetch(server.rpcUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'getTransaction',
      params: [signature, { encoding: 'json', maxSupportedTransactionVersion: 0, commitment: 'confirmed' }],
    }),
  });
  const { result } = (await response.json()) as { result: unknown };
  const documented = JSON.parse(
    readFileSync(new URL('../fixtures/token2022-transfer.json', import.meta.url), 'utf8'),
  ) as { result: unknown };
  const ours = new Set(shape(result));
  t.true(
    ours.has('.meta.loadedAddresses.writable[]') && ours.has('.meta.postTokenBalances[].uiTokenAmount.uiAmountString'),
  );
  const theirs = new Set(shape(documented.result));
  t.deepEqual(
    [...theirs].filter((path) => !ours.has(path) && !path.startsWith('.meta.innerInstructions[]')),
    [],
    'every documented field is there',
  );
  t.deepEqual(
    [...ours].filter((path) => !theirs.has(path) && !path.startsWith('.meta.innerInstructions[]')),
    [],
    'and nothing else',
  );
});

test('a transaction arriving processed is seen only once confirmed', async (t) => {
  const server = await startLocalSolana({ port: 0, arrival: 'processed' });
  t.teardown(() => server.stop());
  const rpc = createSolanaRpc(server.rpcUrl);
  const owner = (await generateKeyPairSigner()).address;
  const signature = await server.ledger.mintTo(owner, 'usdt', 1n);
  const faucetSignatures = () =>
    rpc.getSignaturesForAddress(server.ledger.faucet, { commitment: 'confirmed', limit: 1 }).send();
  t.not((await faucetSignatures())[0]?.signature, signature);
  t.like((await rpc.getSignatureStatuses([signature]).send()).value[0], { confirmationStatus: 'processed' });
  server.ledger.confirm();
  t.like((await faucetSignatures())[0], { signature, confirmationStatus: 'confirmed' });
});

test('a token account given as a merchant wallet is named with the wallet that owns it', async (t) => {
  const { rpc, payer, merchant, usdc, ata, payUsdc } = await localSolana(t);
  await payUsdc(1n, []);
  t.is(await merchantWalletProblem(rpc, merchant), null);
  t.is(await merchantWalletProblem(rpc, payer.address), null, 'a funded System account');
  t.is(
    await merchantWalletProblem(rpc, await ata(merchant)),
    `is a token account (of mint ${usdc}); give the wallet that owns it, ${merchant}`,
  );
  t.is(await merchantWalletProblem(rpc, usdc), 'is a token mint, not a wallet');
});
