import type { Address } from '@solana/kit';
import { parseTransferSolInstruction } from '@solana-program/system';
import {
  findAssociatedTokenPda,
  parseTransferCheckedInstruction,
  parseTransferInstruction,
} from '@solana-program/token';
import { NATIVE_ASSET_ADDRESS } from '../network-definition.ts';
import { SYSTEM_PROGRAM_ADDRESS, TOKEN_2022_PROGRAM_ADDRESS, TOKEN_PROGRAM_ADDRESS } from './define-network.ts';
import {
  decodeTransactionJson,
  TransactionJsonError,
  type DecodedInstruction,
  type DecodedTransaction,
} from './transaction-json.ts';

/** What a session asked for: where, in what, and the reference keys it issued (in URL order). */
export type ExpectedTransfer = {
  /** The merchant's wallet. */
  recipient: Address;
  /** The mint, or `native` for SOL. */
  mint: Address | typeof NATIVE_ASSET_ADDRESS;
  references: readonly Address[];
};

/** One payment: a transfer instruction carrying the session's references. */
export type SolanaPayment = {
  /** `<signature>:<instruction index>`, the payment's key. */
  id: string;
  signature: string;
  /** The top-level instruction's index, or `innerInstructionIndex` of one a program invoked (CPI). */
  instructionIndex: number;
  slot: bigint;
  blockTime: bigint | null;
  /** The program that moved the funds: System, Token or Token-2022. */
  program: Address;
  mint: Address | typeof NATIVE_ASSET_ADDRESS;
  /** What the merchant received from this instruction, in base units (never more than its balance rose). */
  amount: bigint;
  /** The account credited: the merchant's wallet for SOL, its associated token account for a token. */
  destination: Address;
  /** The wallet that paid: the source token account's owner (else the authority), or the SOL sender. */
  payer: Address;
};

export type RejectionReason =
  /** No transfer instruction (top-level or invoked by a program) carries the issued references. */
  | 'reference-not-found'
  /** The instruction carrying the references is not a System, Token or Token-2022 transfer. */
  | 'not-a-transfer'
  /** The references are there, but not exactly as issued (order, extra keys, missing keys). */
  | 'references-mismatch'
  /** Another mint (or SOL instead of a token, or the reverse). */
  | 'wrong-token'
  /** Not the merchant's wallet (SOL) or its associated token account for the mint (token). */
  | 'wrong-recipient'
  /** The destination's balance did not rise by the transferred amount (e.g. paid to itself). */
  | 'amount-not-received';

export type Rejection = {
  instructionIndex: number;
  reason: RejectionReason;
  message: string;
  /** The mint that moved, when the reason is `wrong-token` (`native` for SOL). */
  observedMint?: Address | typeof NATIVE_ASSET_ADDRESS;
};

export type TransferCheck =
  | { valid: true; signature: string; payments: SolanaPayment[]; rejected: Rejection[] }
  | {
      valid: false;
      signature?: string;
      reason: 'not-found' | 'malformed' | 'failed' | RejectionReason;
      message: string;
      rejected: Rejection[];
      /** The transaction error as the node reported it, when `failed`. */
      err?: unknown;
    };

/**
 * Checks a `getTransaction` answer (`json` encoding, `maxSupportedTransactionVersion: 0`) for
 * payments of `expected`, with the rules of `@solana/pay` 1.0.16's `validateTransfer`: the
 * transaction succeeded; the transfer is a System `TransferSol` or a Token / Token-2022
 * `Transfer` or `TransferChecked`; its destination is the merchant's wallet (SOL) or the
 * merchant's associated token account for the mint, derived with the instruction's token program;
 * the accounts after the transfer's own are exactly the issued references; the amount is read from
 * the pre/post (token) balances.
 *
 * Where it differs, it does so to credit no more than arrived and to key each payment by
 * (signature, instruction index): the transfer may be any top-level instruction carrying the
 * references, not only the last (wallets append instructions such as Lighthouse assertions after
 * it), or one a program invoked (a wallet that is a program pays by CPI; the node records those as
 * inner instructions, keyed here by `innerInstructionIndex`); each instruction is credited its own amount, capped by what the destination's balance rose
 * (so two sessions paid in one transaction are not both credited the sum, and a transfer to
 * itself credits nothing); a destination with no balance before counts from zero (created in the
 * same transaction); lookup-table accounts are resolved; the amount requested is not compared
 * here (partial and overpayments are the matcher's business, as on EVM).
 */
export async function validateSolanaTransfer(answer: unknown, expected: ExpectedTransfer): Promise<TransferCheck> {
  let tx: DecodedTransaction | null;
  try {
    tx = decodeTransactionJson(answer);
  } catch (error) {
    if (error instanceof TransactionJsonError)
      return { valid: false, reason: 'malformed', message: error.message, rejected: [] };
    throw error;
  }
  if (tx === null)
    return { valid: false, reason: 'not-found', message: 'no such transaction at that commitment', rejected: [] };
  const { signature } = tx;
  if (tx.meta.err !== null && tx.meta.err !== undefined)
    return {
      valid: false,
      signature,
      reason: 'failed',
      message: `the transaction failed: ${stringify(tx.meta.err)}`,
      rejected: [],
      err: tx.meta.err,
    };

  const candidates: { index: number; transfer: Transfer }[] = [];
  const rejected: Rejection[] = [];
  const references = new Set<string>(expected.references);
  for (const { index, instruction } of executionOrder(tx)) {
    if (!instruction.accounts.some((a) => references.has(a.address))) continue;
    const outcome = checkInstruction(tx, instruction, expected);
    if (outcome.ok) candidates.push({ index, transfer: outcome.transfer });
    else rejected.push({ instructionIndex: index, ...outcome.problem });
  }

  const payments: SolanaPayment[] = [];
  for (const { index, transfer } of candidates) {
    const result = await checkDestination(tx, transfer, expected);
    if (result !== null) rejected.push({ instructionIndex: index, ...result });
    else payments.push({ ...paymentOf(tx, index, transfer), amount: transfer.amount });
  }
  creditWithinBalanceRise(tx, payments, rejected);
  rejected.sort((a, b) => a.instructionIndex - b.instructionIndex);

  if (payments.length > 0) return { valid: true, signature, payments, rejected };
  const first = rejected[0];
  if (first !== undefined) return { valid: false, signature, reason: first.reason, message: first.message, rejected };
  const mentioned = tx.accountKeys.some((key) => references.has(key));
  return {
    valid: false,
    signature,
    reason: 'reference-not-found',
    message: mentioned
      ? 'the reference is an account of the transaction but of no instruction'
      : 'the transaction does not carry the reference',
    rejected,
  };
}

/**
 * The key of the `inner`-th instruction top-level instruction `outer` invoked (CPI): past every
 * top-level index (a transaction holds a few hundred at most), so a top-level payment keeps its
 * index as its key and an invoked one never takes another's.
 */
export const innerInstructionIndex = (outer: number, inner: number): number => (outer + 1) * 65_536 + inner;

/**
 * Every instruction that ran, in order: each top-level one, then those it invoked. A wallet that is
 * a program (a multisig vault, an aggregator) pays by CPI: the transfer carrying the references is
 * then an inner instruction, and the funds arrived all the same.
 */
function executionOrder(tx: DecodedTransaction): { index: number; instruction: DecodedInstruction }[] {
  return tx.instructions.flatMap((instruction, outer) => [
    { index: outer, instruction },
    ...(tx.innerInstructions[outer] ?? []).map((inner, n) => ({
      index: innerInstructionIndex(outer, n),
      instruction: inner,
    })),
  ]);
}

/** A decoded transfer instruction. */
type Transfer = {
  program: Address;
  kind: 'sol' | 'token';
  /** Account index of the destination in the transaction. */
  destinationIndex: number;
  destination: Address;
  sourceIndex: number;
  authority: Address;
  /** Named in the instruction (`TransferChecked`), else read from the destination's token balance. */
  mint: Address | typeof NATIVE_ASSET_ADDRESS | undefined;
  amount: bigint;
};

type Problem = { reason: RejectionReason; message: string; observedMint?: Address | typeof NATIVE_ASSET_ADDRESS };

const SYSTEM_TRANSFER_SOL = 2;
const TOKEN_TRANSFER = 3;
const TOKEN_TRANSFER_CHECKED = 12;

function checkInstruction(
  tx: DecodedTransaction,
  instruction: DecodedInstruction,
  expected: ExpectedTransfer,
): { ok: true; transfer: Transfer } | { ok: false; problem: Problem } {
  const transfer = decodeTransfer(instruction);
  if (transfer === null)
    return {
      ok: false,
      problem: {
        reason: 'not-a-transfer',
        message: `the instruction carrying the reference is not a transfer of the System, Token or Token-2022 program (program ${instruction.programAddress})`,
      },
    };
  const required = transfer.kind === 'sol' ? 2 : transfer.mintInInstruction ? 4 : 3;
  const extra = instruction.accounts.slice(required).map((a) => a.address);
  if (extra.length !== expected.references.length || extra.some((key, i) => key !== expected.references[i]))
    return {
      ok: false,
      problem: {
        reason: 'references-mismatch',
        message: `the transfer carries [${extra.join(', ')}] after its accounts, not exactly the issued references [${expected.references.join(', ')}]`,
      },
    };
  return {
    ok: true,
    transfer: { ...transfer, mint: transfer.mint ?? tokenBalanceOf(tx, transfer.destinationIndex)?.mint },
  };
}

/** The transfer an instruction makes, or null when it is none of the three kinds accepted. */
function decodeTransfer(instruction: DecodedInstruction): (Transfer & { mintInInstruction: boolean }) | null {
  const { programAddress: program, data, accountIndexes } = instruction;
  const at = (i: number) => accountIndexes[i] ?? -1;
  try {
    if (program === SYSTEM_PROGRAM_ADDRESS) {
      if (data.length !== 12 || new DataView(data.buffer, data.byteOffset).getUint32(0, true) !== SYSTEM_TRANSFER_SOL)
        return null;
      const parsed = parseTransferSolInstruction(instruction);
      return {
        program,
        kind: 'sol',
        sourceIndex: at(0),
        destinationIndex: at(1),
        destination: parsed.accounts.destination.address,
        authority: parsed.accounts.source.address,
        mint: NATIVE_ASSET_ADDRESS,
        amount: parsed.data.amount,
        mintInInstruction: false,
      };
    }
    if (program !== TOKEN_PROGRAM_ADDRESS && program !== TOKEN_2022_PROGRAM_ADDRESS) return null;
    if (data[0] === TOKEN_TRANSFER && data.length === 9) {
      const parsed = parseTransferInstruction(instruction);
      return {
        program,
        kind: 'token',
        sourceIndex: at(0),
        destinationIndex: at(1),
        destination: parsed.accounts.destination.address,
        authority: parsed.accounts.authority.address,
        mint: undefined,
        amount: parsed.data.amount,
        mintInInstruction: false,
      };
    }
    if (data[0] === TOKEN_TRANSFER_CHECKED && data.length === 10) {
      const parsed = parseTransferCheckedInstruction(instruction);
      return {
        program,
        kind: 'token',
        sourceIndex: at(0),
        destinationIndex: at(2),
        destination: parsed.accounts.destination.address,
        authority: parsed.accounts.authority.address,
        mint: parsed.accounts.mint.address,
        amount: parsed.data.amount,
        mintInInstruction: true,
      };
    }
  } catch {
    // Too few accounts for the instruction: not a transfer this validator can read.
  }
  return null;
}

async function checkDestination(
  tx: DecodedTransaction,
  transfer: Transfer,
  expected: ExpectedTransfer,
): Promise<Problem | null> {
  const observedMint = transfer.mint;
  if (observedMint !== expected.mint) {
    const what = (mint: typeof observedMint) =>
      mint === NATIVE_ASSET_ADDRESS ? 'SOL' : mint === undefined ? 'an unknown mint' : `mint ${mint}`;
    return {
      reason: 'wrong-token',
      message: `paid in ${what(observedMint)}, not ${what(expected.mint)}`,
      ...(observedMint === undefined ? {} : { observedMint }),
    };
  }
  if (transfer.kind === 'sol') {
    if (transfer.destination === expected.recipient) return null;
    return {
      reason: 'wrong-recipient',
      message: `paid to ${transfer.destination}, not the merchant's wallet ${expected.recipient}`,
    };
  }
  const [ata] = await findAssociatedTokenPda({
    owner: expected.recipient,
    mint: observedMint as Address,
    tokenProgram: transfer.program,
  });
  if (transfer.destination === ata) return null;
  const owner = tokenBalanceOf(tx, transfer.destinationIndex)?.owner;
  return {
    reason: 'wrong-recipient',
    message:
      owner === expected.recipient
        ? `paid to ${transfer.destination}, a token account of the merchant that is not its associated token account ${ata}`
        : `paid to ${transfer.destination}, not the merchant's associated token account ${ata}`,
  };
}

function paymentOf(tx: DecodedTransaction, index: number, transfer: Transfer): Omit<SolanaPayment, 'amount'> {
  const sourceOwner = transfer.kind === 'token' ? tokenBalanceOf(tx, transfer.sourceIndex, 'pre')?.owner : undefined;
  return {
    id: `${tx.signature}:${index}`,
    signature: tx.signature,
    instructionIndex: index,
    slot: tx.slot,
    blockTime: tx.blockTime,
    program: transfer.program,
    mint: transfer.mint ?? NATIVE_ASSET_ADDRESS,
    destination: transfer.destination,
    payer: sourceOwner ?? transfer.authority,
  };
}

/**
 * Caps each payment by what its destination's balance actually rose. Every transfer into the
 * destination (top-level or invoked), whatever it carries, takes its share in execution order, so
 * the same allocation holds whichever session asks and the payments never add up to more than arrived.
 */
function creditWithinBalanceRise(tx: DecodedTransaction, payments: SolanaPayment[], rejected: Rejection[]): void {
  const executed = executionOrder(tx);
  for (let i = payments.length - 1; i >= 0; i--) {
    const payment = payments[i] as SolanaPayment;
    const rise = balanceRise(tx, tx.accountKeys.indexOf(payment.destination), payment.mint);
    let before = 0n;
    for (const { instruction } of executed.slice(
      0,
      executed.findIndex((e) => e.index === payment.instructionIndex),
    )) {
      const transfer = decodeTransfer(instruction);
      if (transfer?.destination === payment.destination) before += transfer.amount;
    }
    const left = rise > before ? rise - before : 0n;
    if (left > 0n) {
      payment.amount = payment.amount < left ? payment.amount : left;
      continue;
    }
    rejected.push({
      instructionIndex: payment.instructionIndex,
      reason: 'amount-not-received',
      message: `the balance of ${payment.destination} did not rise by the amount transferred`,
    });
    payments.splice(i, 1);
  }
}

function balanceRise(tx: DecodedTransaction, index: number, mint: SolanaPayment['mint']): bigint {
  if (mint === NATIVE_ASSET_ADDRESS) {
    const pre = tx.meta.preBalances[index] ?? 0n;
    const post = tx.meta.postBalances[index] ?? 0n;
    return post > pre ? post - pre : 0n;
  }
  const post = tokenBalanceOf(tx, index, 'post');
  if (post === undefined || post.mint !== mint) return 0n;
  const pre = tokenBalanceOf(tx, index, 'pre');
  const before = pre === undefined ? 0n : BigInt(pre.uiTokenAmount.amount);
  const after = BigInt(post.uiTokenAmount.amount);
  return after > before ? after - before : 0n;
}

/** The token balance the node recorded for an account, after (default) or before the transaction. */
function tokenBalanceOf(tx: DecodedTransaction, accountIndex: number, when: 'pre' | 'post' = 'post') {
  const balances = when === 'pre' ? tx.meta.preTokenBalances : tx.meta.postTokenBalances;
  return balances?.find((b) => b.accountIndex === accountIndex);
}

function stringify(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) => (typeof v === 'bigint' ? v.toString() : v));
}
