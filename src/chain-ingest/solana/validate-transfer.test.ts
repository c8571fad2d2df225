import test from 'ava';
import { readFileSync } from 'node:fs';
import { getBase58Decoder, type Address } from '@solana/kit';
import { findAssociatedTokenPda } from '@solana-program/token';
import { TOKEN_2022_PROGRAM_ADDRESS, TOKEN_PROGRAM_ADDRESS } from './define-network.ts';
import { solanaMainnet } from './networks.ts';
import { innerInstructionIndex, validateSolanaTransfer, type ExpectedTransfer } from './validate-transfer.ts';

/*
 * The fixtures are getTransaction answers (json encoding, maxSupportedTransactionVersion 0) in the
 * shape of the Solana RPC documentation's examples; see fixtures/README.md.
 */

type TokenBalance = { accountIndex: number; mint: string; owner: string; uiTokenAmount: { amount: string } };
type Answer = {
  slot: number;
  blockTime: number;
  transaction: {
    signatures: string[];
    message: {
      accountKeys: string[];
      header: { numReadonlyUnsignedAccounts: number };
      instructions: { programIdIndex: number; accounts: number[]; data: string }[];
      addressTableLookups?: { accountKey: string; writableIndexes: number[]; readonlyIndexes: number[] }[];
    };
  };
  meta: {
    err: unknown;
    innerInstructions?: {
      index: number;
      instructions: { programIdIndex: number; accounts: number[]; data: string }[];
    }[];
    preBalances: number[];
    postBalances: number[];
    preTokenBalances: TokenBalance[];
    postTokenBalances: TokenBalance[];
    loadedAddresses: { writable: string[]; readonly: string[] };
  };
};

const fixture = (name: string): Answer =>
  (JSON.parse(readFileSync(new URL(`./fixtures/${name}`, import.meta.url), 'utf8')) as { result: Answer }).result;

const MERCHANT = '8RGfqXrumZdp3mnFje37F2psaga4J23ycFD5mKt6oYvr' as Address;
const PAYER = 'HVnbnQYWRNTc1XcBHqLQHtpy8bHoEE8EKPdMRLc6yxFe' as Address;
const REFERENCE = 'BY3Ac1GySHahviJriYrtPsoRxwSTFqxrpvdXDTn9q4Wn' as Address;
const OTHER_REFERENCE = '82ZJ7nbGpixjeDCmEhUcmwXYfvurzAgGdtSMuHnUgyny' as Address;
const USDC = solanaMainnet.assets[1]!.address as Address;
const USDT = solanaMainnet.assets[2]!.address as Address;
const PYUSD = '2b1kV6DkPAnxd5ixfnxCpjxmKwqjjaYmCZfHsFu24GXo' as Address;

const usdcExpected: ExpectedTransfer = { recipient: MERCHANT, mint: USDC, references: [REFERENCE] };
const ata = async (mint: Address, program: Address = TOKEN_PROGRAM_ADDRESS) =>
  (await findAssociatedTokenPda({ owner: MERCHANT, mint, tokenProgram: program }))[0];

test('a USDC transferChecked carrying the reference is one payment keyed by signature and instruction', async (t) => {
  const answer = fixture('usdc-transfer.json');
  const check = await validateSolanaTransfer(answer, usdcExpected);
  if (!check.valid) return t.fail(check.message);
  const signature = answer.transaction.signatures[0]!;
  t.deepEqual(check.payments, [
    {
      id: `${signature}:2`,
      signature,
      instructionIndex: 2,
      slot: 372_145_991n,
      blockTime: 1_767_225_600n,
      program: TOKEN_PROGRAM_ADDRESS,
      mint: USDC,
      amount: 1_500_000n,
      destination: await ata(USDC),
      payer: PAYER,
    },
  ]);
  t.deepEqual(check.rejected, []);
});

test('a Token-2022 transfer pays the associated token account derived with Token-2022', async (t) => {
  const check = await validateSolanaTransfer(fixture('token2022-transfer.json'), { ...usdcExpected, mint: PYUSD });
  if (!check.valid) return t.fail(check.message);
  t.like(check.payments[0], {
    program: TOKEN_2022_PROGRAM_ADDRESS,
    mint: PYUSD,
    amount: 25_000_000n,
    destination: await ata(PYUSD, TOKEN_2022_PROGRAM_ADDRESS),
  });
  t.not(await ata(PYUSD, TOKEN_2022_PROGRAM_ADDRESS), await ata(PYUSD), 'the program is part of the derivation');
});

test('a versioned transaction resolves the destination and mint loaded from a lookup table', async (t) => {
  const answer = fixture('versioned-lookup-table-transfer.json');
  t.deepEqual(answer.meta.loadedAddresses, { writable: [await ata(USDC)], readonly: [USDC] });
  const check = await validateSolanaTransfer(answer, usdcExpected);
  if (!check.valid) return t.fail(check.message);
  t.like(check.payments[0], { instructionIndex: 2, mint: USDC, amount: 10_000_000n, destination: await ata(USDC) });
});

test('the answer as kit returns it (u64 fields as bigints) reads the same', async (t) => {
  const toBigInts = (value: unknown, key = ''): unknown => {
    if (Array.isArray(value)) return value.map((v) => toBigInts(v, key));
    if (typeof value === 'object' && value !== null)
      return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, toBigInts(v, k)]));
    return typeof value === 'number' && ['slot', 'blockTime', 'fee', 'preBalances', 'postBalances'].includes(key)
      ? BigInt(value)
      : value;
  };
  const check = await validateSolanaTransfer(toBigInts(fixture('usdc-transfer.json')), usdcExpected);
  t.true(check.valid);
  t.is(check.valid && check.payments[0]?.amount, 1_500_000n);
});

test('a failed transaction is no payment, with the node error', async (t) => {
  const answer = fixture('usdc-transfer.json');
  answer.meta.err = { InstructionError: [2, { Custom: 1 }] };
  const check = await validateSolanaTransfer(answer, usdcExpected);
  t.like(check, { valid: false, reason: 'failed', err: { InstructionError: [2, { Custom: 1 }] } });
  t.regex(check.valid ? '' : check.message, /the transaction failed: \{"InstructionError":\[2,\{"Custom":1\}\]\}/);
});

test('another mint is the wrong token and says which mint moved', async (t) => {
  const check = await validateSolanaTransfer(fixture('usdc-transfer.json'), { ...usdcExpected, mint: USDT });
  t.like(check, { valid: false, reason: 'wrong-token', rejected: [{ instructionIndex: 2, observedMint: USDC }] });
  t.is(check.valid ? '' : check.message, `paid in mint ${USDC}, not mint ${USDT}`);
  const sol = await validateSolanaTransfer(fixture('usdc-transfer.json'), { ...usdcExpected, mint: 'native' });
  t.like(sol, { valid: false, reason: 'wrong-token', message: `paid in mint ${USDC}, not SOL` });
});

test('a transfer to another wallet is the wrong recipient', async (t) => {
  const other = PAYER;
  const check = await validateSolanaTransfer(fixture('usdc-transfer.json'), { ...usdcExpected, recipient: other });
  t.like(check, { valid: false, reason: 'wrong-recipient' });
  t.regex(check.valid ? '' : check.message, /not the merchant's associated token account/);
});

test('references must be exactly as issued; an absent reference is not found', async (t) => {
  const answer = fixture('usdc-transfer.json');
  const more = await validateSolanaTransfer(answer, { ...usdcExpected, references: [REFERENCE, OTHER_REFERENCE] });
  t.like(more, { valid: false, reason: 'references-mismatch' });
  const absent = await validateSolanaTransfer(answer, { ...usdcExpected, references: [OTHER_REFERENCE] });
  t.like(absent, {
    valid: false,
    reason: 'reference-not-found',
    message: 'the transaction does not carry the reference',
  });
});

test('null is not found; a malformed answer says where', async (t) => {
  t.like(await validateSolanaTransfer(null, usdcExpected), { valid: false, reason: 'not-found' });
  const noBalances = fixture('usdc-transfer.json') as unknown as { meta: Record<string, unknown> };
  delete noBalances.meta['preBalances'];
  t.like(await validateSolanaTransfer(noBalances, usdcExpected), {
    valid: false,
    reason: 'malformed',
    message: 'not a getTransaction json answer: meta.preBalances: Invalid input: expected array, received undefined',
  });
  const lost = fixture('versioned-lookup-table-transfer.json');
  lost.meta.loadedAddresses = { writable: [], readonly: [] };
  t.like(await validateSolanaTransfer(lost, usdcExpected), {
    valid: false,
    reason: 'malformed',
    message: 'meta.loadedAddresses holds 0 keys but the lookups name 2',
  });
});

test('what is credited never exceeds what the balance rose', async (t) => {
  const short = fixture('usdc-transfer.json');
  short.meta.postTokenBalances[1]!.uiTokenAmount.amount = String(1_499_750_000 + 1_000_000);
  const capped = await validateSolanaTransfer(short, usdcExpected);
  t.is(capped.valid && capped.payments[0]?.amount, 1_000_000n);
  const none = fixture('usdc-transfer.json');
  none.meta.postTokenBalances[1]!.uiTokenAmount.amount = none.meta.preTokenBalances[1]!.uiTokenAmount.amount;
  t.like(await validateSolanaTransfer(none, usdcExpected), { valid: false, reason: 'amount-not-received' });
});

test('a destination created in the same transaction counts from zero', async (t) => {
  const created = fixture('usdc-transfer.json');
  created.meta.preTokenBalances = created.meta.preTokenBalances.filter((b) => b.accountIndex !== 2);
  created.meta.postTokenBalances[1]!.uiTokenAmount.amount = '1500000';
  const check = await validateSolanaTransfer(created, usdcExpected);
  t.is(check.valid && check.payments[0]?.amount, 1_500_000n);
});

/** The USDC fixture with a second transfer of `amount` to the same merchant carrying OTHER_REFERENCE. */
function twoSessionsInOneTransaction(amount: bigint, rise: bigint): Answer {
  const answer = fixture('usdc-transfer.json');
  const { message } = answer.transaction;
  message.accountKeys.push(OTHER_REFERENCE);
  message.header.numReadonlyUnsignedAccounts += 1;
  answer.meta.preBalances.push(0);
  answer.meta.postBalances.push(0);
  const transfer = message.instructions[2]!;
  const data = new Uint8Array(10);
  data[0] = 12;
  new DataView(data.buffer).setBigUint64(1, amount, true);
  data[9] = 6;
  message.instructions.push({ ...transfer, accounts: [1, 4, 2, 0, 7], data: getBase58Decoder().decode(data) });
  const pre = BigInt(answer.meta.preTokenBalances[1]!.uiTokenAmount.amount);
  answer.meta.postTokenBalances[1]!.uiTokenAmount.amount = String(pre + rise);
  return answer;
}

test('two sessions paid in one transaction are each credited their own instruction', async (t) => {
  const answer = twoSessionsInOneTransaction(2_000_000n, 3_500_000n);
  const first = await validateSolanaTransfer(answer, usdcExpected);
  const second = await validateSolanaTransfer(answer, { ...usdcExpected, references: [OTHER_REFERENCE] });
  t.like(first.valid && first.payments, [{ instructionIndex: 2, amount: 1_500_000n }]);
  t.like(second.valid && second.payments, [{ instructionIndex: 3, amount: 2_000_000n }]);
  t.is(first.valid && first.payments.length, 1);
  const short = twoSessionsInOneTransaction(2_000_000n, 2_000_000n);
  const shortSecond = await validateSolanaTransfer(short, { ...usdcExpected, references: [OTHER_REFERENCE] });
  t.is(shortSecond.valid && shortSecond.payments[0]?.amount, 500_000n, 'the earlier instruction takes its share first');
});

/** A multisig vault's program (Squads v4): a wallet that pays by invoking the Token program. */
const VAULT_PROGRAM = 'SQDS4ep65T869zMMBKyuUq6aD6EgTu8psMjkvj52pCf' as Address;

/** The USDC fixture with its transfer made by a program's instruction 2 (CPI): an inner instruction, as the node records it. */
function paidByProgram(): Answer {
  const answer = fixture('usdc-transfer.json');
  const { message } = answer.transaction;
  message.accountKeys.push(VAULT_PROGRAM);
  message.header.numReadonlyUnsignedAccounts += 1;
  answer.meta.preBalances.push(1);
  answer.meta.postBalances.push(1);
  const transfer = message.instructions[2]!;
  message.instructions[2] = { programIdIndex: 7, accounts: [...transfer.accounts], data: '3' };
  answer.meta.innerInstructions = [{ index: 2, instructions: [transfer] }];
  return answer;
}

test('a transfer a program invoked (CPI) carrying the reference is a payment, keyed past every top-level index', async (t) => {
  const answer = paidByProgram();
  const check = await validateSolanaTransfer(answer, usdcExpected);
  if (!check.valid) return t.fail(check.message);
  const signature = answer.transaction.signatures[0]!;
  const key = innerInstructionIndex(2, 0);
  t.true(key > 1232, 'no top-level index reaches it (a transaction is at most 1232 bytes)');
  t.like(check.payments, [
    { id: `${signature}:${key}`, instructionIndex: key, mint: USDC, amount: 1_500_000n, destination: await ata(USDC) },
  ]);
  t.is(check.payments.length, 1);
  t.like(
    check.rejected,
    [{ instructionIndex: 2, reason: 'not-a-transfer' }],
    'the program instruction itself moved nothing',
  );
});

test('an invoked transfer takes its share of the balance rise before a later top-level one', async (t) => {
  const answer = paidByProgram();
  const { message } = answer.transaction;
  message.accountKeys.push(OTHER_REFERENCE);
  message.header.numReadonlyUnsignedAccounts += 1;
  answer.meta.preBalances.push(0);
  answer.meta.postBalances.push(0);
  const data = new Uint8Array(10);
  data[0] = 12;
  new DataView(data.buffer).setBigUint64(1, 2_000_000n, true);
  data[9] = 6;
  message.instructions.push({ programIdIndex: 6, accounts: [1, 4, 2, 0, 8], data: getBase58Decoder().decode(data) });
  // Only 2 USDC arrived in all: the invoked 1.5 first, so the later transfer is credited the 0.5 left.
  const pre = BigInt(answer.meta.preTokenBalances[1]!.uiTokenAmount.amount);
  answer.meta.postTokenBalances[1]!.uiTokenAmount.amount = String(pre + 2_000_000n);
  const invoked = await validateSolanaTransfer(answer, usdcExpected);
  const later = await validateSolanaTransfer(answer, { ...usdcExpected, references: [OTHER_REFERENCE] });
  t.like(invoked.valid && invoked.payments, [{ instructionIndex: innerInstructionIndex(2, 0), amount: 1_500_000n }]);
  t.like(later.valid && later.payments, [{ instructionIndex: 3, amount: 500_000n }]);
});

test('the transfer need not be the last instruction: one appended after it is ignored', async (t) => {
  const answer = fixture('usdc-transfer.json');
  answer.transaction.message.instructions.push({ programIdIndex: 3, accounts: [], data: '3' });
  const check = await validateSolanaTransfer(answer, usdcExpected);
  t.true(check.valid);
});

test('a reference on an instruction of another program is not a transfer', async (t) => {
  const answer = fixture('usdc-transfer.json');
  const { instructions } = answer.transaction.message;
  instructions[2] = { programIdIndex: 3, accounts: [5], data: '3' };
  t.like(await validateSolanaTransfer(answer, usdcExpected), { valid: false, reason: 'not-a-transfer' });
});

test('a SOL transfer with the reference credits the lamports the merchant wallet received', async (t) => {
  const data = new Uint8Array(12);
  new DataView(data.buffer).setUint32(0, 2, true);
  new DataView(data.buffer).setBigUint64(4, 250_000_000n, true);
  const answer = {
    slot: 430,
    blockTime: 1_767_225_800,
    transaction: {
      signatures: ['5Qg3hGdWXvSKd9yH9S3a6oeJwmn8gKHNGsSbeGvW2bsAUC1zWfnTbdMGgSeHpe5m3GC1Yh7MrFsFZjSpBuHSXnYM'],
      message: {
        accountKeys: [PAYER, MERCHANT, '11111111111111111111111111111111', REFERENCE],
        header: { numRequiredSignatures: 1, numReadonlySignedAccounts: 0, numReadonlyUnsignedAccounts: 2 },
        instructions: [{ programIdIndex: 2, accounts: [0, 1, 3], data: getBase58Decoder().decode(data) }],
        recentBlockhash: 'mfcyqEXB3DnHXki6KjjmZck6YjmZLvpAByy2fj4nh6B',
      },
    },
    meta: {
      err: null,
      fee: 5000,
      preBalances: [1_000_000_000, 10, 1, 0],
      postBalances: [749_995_000, 250_000_010, 1, 0],
      preTokenBalances: [],
      postTokenBalances: [],
    },
  };
  const check = await validateSolanaTransfer(answer, { recipient: MERCHANT, mint: 'native', references: [REFERENCE] });
  t.like(check.valid && check.payments[0], {
    instructionIndex: 0,
    mint: 'native',
    amount: 250_000_000n,
    destination: MERCHANT,
    payer: PAYER,
    program: '11111111111111111111111111111111',
  });
  const token = await validateSolanaTransfer(answer, usdcExpected);
  t.like(token, { valid: false, reason: 'wrong-token', message: `paid in SOL, not mint ${USDC}` });
});
