import { createHash } from 'node:crypto';
import {
  appendTransactionMessageInstructions,
  createKeyPairSignerFromPrivateKeyBytes,
  createTransactionMessage,
  getAddressDecoder,
  getBase58Decoder,
  getBase64Decoder,
  getCompiledTransactionMessageDecoder,
  getTransactionDecoder,
  getTransactionEncoder,
  lamports,
  pipe,
  setTransactionMessageFeePayerSigner,
  setTransactionMessageLifetimeUsingBlockhash,
  signTransactionMessageWithSigners,
  signature as asSignature,
  type Address,
  type Blockhash,
  type Instruction,
  type ReadonlyUint8Array,
  type Signature,
  type KeyPairSigner,
  type Transaction,
} from '@solana/kit';
import { getCreateAccountInstruction, getTransferSolInstruction } from '@solana-program/system';
import {
  findAssociatedTokenPda,
  getCreateAssociatedTokenIdempotentInstruction,
  getInitializeMint2Instruction,
  getMintSize,
  getMintToInstruction,
} from '@solana-program/token';
import { FailedTransactionMetadata, LiteSVM, type TransactionMetadata } from 'litesvm';
import type { Commitment } from '../define-network.ts';
import { TOKEN_2022_PROGRAM_ADDRESS, TOKEN_PROGRAM_ADDRESS } from '../define-network.ts';
import { describeTransactionError, transactionErrorJson, type TransactionErrorJson } from './transaction-error.ts';

/** A JSON-RPC error a node would answer with; the server passes code, message and data on. */
export class LocalSolanaRpcError extends Error {
  override name = 'LocalSolanaRpcError';
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
  }
}

/** A token balance as `getTransaction` reports it. */
export type TokenBalanceJson = {
  accountIndex: number;
  mint: Address;
  owner: Address;
  programId: Address;
  uiTokenAmount: { amount: string; decimals: number; uiAmount: number | null; uiAmountString: string };
};

export type ReachedListener = (commitment: Commitment, txs: readonly StoredTransaction[]) => void;

/** A transaction the ledger holds, with what `getTransaction` needs to answer for it. */
export type StoredTransaction = {
  signature: Signature;
  slot: bigint;
  blockTime: number;
  version: 'legacy' | 0;
  /** The wire transaction, for `encoding: 'base64'`. */
  wire: Uint8Array;
  /** Static keys, then loaded writable, then loaded read-only. */
  accountKeys: readonly Address[];
  err: TransactionErrorJson | null;
  /** `transaction` of a `json` answer. */
  transactionJson: Record<string, unknown>;
  /** `meta` of a `json` answer, without `loadedAddresses` (added when the client names a version). */
  metaJson: Record<string, unknown>;
  loadedAddresses: { writable: Address[]; readonly: Address[] };
  /** Each account's lamports and token balance before and after, by account index (to undo a drop). */
  states: { before: AccountState[]; after: AccountState[] };
  /** Withdrawn from the chain (its fork abandoned): no query sees it again. */
  dropped: boolean;
};

export type LocalSolanaOptions = {
  /** Milliseconds since the epoch, for `blockTime`; `Date.now` unless a test injects a clock. */
  now?: () => number;
  /**
   * The status a new transaction has on arrival: `confirmed` (the default, as a healthy cluster
   * within a second), `processed` (the test confirms it), or `finalized` (nothing to move).
   */
  arrival?: Commitment;
};

/** The test assets the local cluster mints. */
export type LocalAsset = 'usdc' | 'usdt';

export type LocalSolana = ReturnType<typeof wrapLedger>;

/*
 * Fixed keys, so a fresh local cluster always has the same mints and faucet (like hardhat's
 * accounts, they are public: test use only).
 */
const seed = (name: string) => createHash('sha256').update(`weir/solana-devnet/${name}`).digest();

/** The test mints every local cluster creates (fixed keys): known without asking it. */
export async function localSolanaMints(): Promise<Record<LocalAsset, Address>> {
  const [usdc, usdt] = await Promise.all(
    ['usdc-mint', 'usdt-mint'].map((name) => createKeyPairSignerFromPrivateKeyBytes(seed(name))),
  );
  return { usdc: usdc!.address, usdt: usdt!.address };
}

/**
 * A local Solana cluster over litesvm (the real System, SPL Token, Token-2022 and ATA programs in
 * process), keeping what a node's RPC reads back: transactions by slot with pre/post balances and
 * token balances, and each one's commitment, which moves only when told (`confirm`, `finalize`,
 * `drop`) or at `arrival`. Each transaction takes its own slot (unless sent in `sameSlot`). At start it creates test USDC and
 * USDT (6 decimals, mint authority the faucet) and finalizes that setup.
 */
export async function createLocalSolana(options: LocalSolanaOptions = {}): Promise<LocalSolana> {
  const svm = new LiteSVM();
  const faucet = await createKeyPairSignerFromPrivateKeyBytes(seed('faucet'));
  const usdc = await createKeyPairSignerFromPrivateKeyBytes(seed('usdc-mint'));
  const usdt = await createKeyPairSignerFromPrivateKeyBytes(seed('usdt-mint'));
  const funded = svm.airdrop(faucet.address, lamports(500_000_000_000_000n));
  if (funded === null || funded instanceof FailedTransactionMetadata)
    throw new Error(`the local Solana could not fund its faucet: ${funded?.toString() ?? 'no result'}`);
  const ledger = wrapLedger(svm, faucet, { usdc: usdc.address, usdt: usdt.address }, options);
  const space = BigInt(getMintSize());
  for (const mint of [usdc, usdt]) {
    await ledger.sendInstructions([
      getCreateAccountInstruction({
        payer: faucet,
        newAccount: mint,
        lamports: svm.minimumBalanceForRentExemption(space),
        space,
        programAddress: TOKEN_PROGRAM_ADDRESS,
      }),
      getInitializeMint2Instruction({ mint: mint.address, decimals: 6, mintAuthority: faucet.address }),
    ]);
  }
  ledger.finalize();
  return ledger;
}

function wrapLedger(
  svm: LiteSVM,
  faucet: KeyPairSigner,
  mints: Record<LocalAsset, Address>,
  options: LocalSolanaOptions,
) {
  const now = options.now ?? Date.now;
  const arrival = options.arrival ?? 'confirmed';
  const transactions: StoredTransaction[] = [];
  const bySignature = new Map<string, StoredTransaction>();
  let slot = 1n;
  let confirmedSlot = 1n;
  let finalizedSlot = 1n;
  let nonce = 0;
  /** While `sameSlot` runs: the slot its transactions share, once the first took one. */
  let sharing: { slot: bigint | null } | null = null;
  svm.warpToSlot(slot);
  const listeners = new Set<ReachedListener>();
  /** Tells the listeners (the PubSub server) which transactions have just reached `commitment`. */
  const reached = (commitment: Commitment, txs: readonly StoredTransaction[]) => {
    const live = txs.filter((tx) => !tx.dropped);
    if (live.length > 0) for (const listener of listeners) listener(commitment, live);
  };
  /** Transactions whose slot is in (from, to], in slot order. */
  const inSlots = (from: bigint, to: bigint) => transactions.filter((tx) => tx.slot > from && tx.slot <= to);

  const statusOf = (tx: StoredTransaction): Commitment =>
    tx.slot <= finalizedSlot ? 'finalized' : tx.slot <= confirmedSlot ? 'confirmed' : 'processed';
  const reaches = (tx: StoredTransaction, commitment: Commitment) =>
    !tx.dropped && RANK[statusOf(tx)] >= RANK[commitment];

  const slotAt = (commitment: Commitment): bigint =>
    commitment === 'finalized' ? finalizedSlot : commitment === 'confirmed' ? confirmedSlot : slot;

  function sendWireTransaction(wire: Uint8Array, send: { skipPreflight?: boolean } = {}): Signature {
    let transaction: Transaction;
    let message: ReturnType<ReturnType<typeof getCompiledTransactionMessageDecoder>['decode']>;
    try {
      transaction = getTransactionDecoder().decode(wire);
      message = getCompiledTransactionMessageDecoder().decode(transaction.messageBytes);
    } catch (error) {
      throw new LocalSolanaRpcError(-32602, `invalid transaction: ${error instanceof Error ? error.message : error}`);
    }
    if (message.version !== 'legacy' && message.version !== 0)
      throw new LocalSolanaRpcError(-32602, `invalid transaction: version ${message.version} is not supported`);
    const signatures = Object.values(transaction.signatures).map((s) =>
      s === null ? '1111111111111111111111111111111111111111111111111111111111111111' : base58(s),
    );
    const signature = asSignature(signatures[0] ?? '');
    if (bySignature.has(signature))
      throw new LocalSolanaRpcError(
        -32002,
        'Transaction simulation failed: This transaction has already been processed',
        { err: 'AlreadyProcessed' },
      );
    const loaded = loadAddresses(svm, message);
    const accountKeys = [...message.staticAccounts, ...loaded.writable, ...loaded.readonly];

    if (send.skipPreflight !== true) {
      const simulated = svm.simulateTransaction(transaction);
      if (simulated instanceof FailedTransactionMetadata) {
        const err = transactionErrorJson(simulated.err());
        throw new LocalSolanaRpcError(-32002, `Transaction simulation failed: ${describeTransactionError(err)}`, {
          err,
          logs: simulated.meta().logs(),
          accounts: null,
          unitsConsumed: Number(simulated.meta().computeUnitsConsumed()),
          returnData: null,
        });
      }
    }

    const before = accountKeys.map((key) => accountState(svm, key));
    const result = svm.sendTransaction(transaction);
    const after = accountKeys.map((key) => accountState(svm, key));
    const failed = result instanceof FailedTransactionMetadata;
    const err = failed ? transactionErrorJson(result.err()) : null;
    const feePayerPaid = (after[0]?.lamports ?? 0n) < (before[0]?.lamports ?? 0n);
    if (failed && !feePayerPaid)
      throw new LocalSolanaRpcError(
        -32002,
        `Transaction failed before execution: ${describeTransactionError(err ?? '')}`,
        {
          err,
        },
      );
    const meta: TransactionMetadata = failed ? result.meta() : result;

    // Inside `sameSlot`, the first transaction opens a slot and the others join it.
    if (sharing === null || sharing.slot === null) {
      slot += 1n;
      svm.warpToSlot(slot);
    }
    if (sharing !== null) sharing.slot = slot;
    if (RANK[arrival] >= RANK.confirmed) confirmedSlot = slot;
    if (arrival === 'finalized') finalizedSlot = slot;
    const sum = (states: AccountState[]) => states.reduce((total, s) => total + s.lamports, 0n);
    const stored: StoredTransaction = {
      signature,
      slot,
      blockTime: Math.floor(now() / 1000),
      version: message.version,
      wire,
      accountKeys,
      err,
      loadedAddresses: loaded,
      states: { before, after },
      dropped: false,
      transactionJson: {
        message: {
          accountKeys: message.staticAccounts,
          header: {
            numReadonlySignedAccounts: message.header.numReadonlySignerAccounts,
            numReadonlyUnsignedAccounts: message.header.numReadonlyNonSignerAccounts,
            numRequiredSignatures: message.header.numSignerAccounts,
          },
          instructions: message.instructions.map((instruction) => ({
            accounts: instruction.accountIndices ?? [],
            data: base58(instruction.data ?? new Uint8Array()),
            programIdIndex: instruction.programAddressIndex,
            stackHeight: null,
          })),
          recentBlockhash: message.lifetimeToken,
          ...(message.version === 0
            ? {
                addressTableLookups: (message.addressTableLookups ?? []).map((lookup) => ({
                  accountKey: lookup.lookupTableAddress,
                  readonlyIndexes: lookup.readonlyIndexes,
                  writableIndexes: lookup.writableIndexes,
                })),
              }
            : {}),
        },
        signatures,
      },
      metaJson: {
        computeUnitsConsumed: meta.computeUnitsConsumed(),
        err,
        fee: sum(before) - sum(after),
        innerInstructions: meta
          .innerInstructions()
          .map((inner, index) => ({
            index,
            instructions: inner.map((i) => ({
              accounts: [...i.instruction().accounts()],
              data: base58(i.instruction().data()),
              programIdIndex: i.instruction().programIdIndex(),
              stackHeight: i.stackHeight(),
            })),
          }))
          .filter((inner) => inner.instructions.length > 0),
        logMessages: meta.logs(),
        postBalances: after.map((s) => s.lamports),
        postTokenBalances: tokenBalances(after),
        preBalances: before.map((s) => s.lamports),
        preTokenBalances: tokenBalances(before),
        rewards: [],
        status: err === null ? { Ok: null } : { Err: err },
      },
    };
    transactions.push(stored);
    bySignature.set(signature, stored);
    for (const level of ['processed', 'confirmed', 'finalized'] as const)
      if (RANK[arrival] >= RANK[level]) reached(level, [stored]);
    return signature;
  }

  async function sendInstructions(instructions: readonly Instruction[]): Promise<Signature> {
    // A distinct compute-unit limit per call keeps two equal faucet requests from sharing a signature.
    nonce += 1;
    const limit = new Uint8Array(5);
    limit[0] = 2;
    new DataView(limit.buffer).setUint32(1, 400_000 + nonce, true);
    const transaction = await pipe(
      createTransactionMessage({ version: 0 }),
      (m) => setTransactionMessageFeePayerSigner(faucet, m),
      (m) =>
        setTransactionMessageLifetimeUsingBlockhash(
          { blockhash: svm.latestBlockhash() as Blockhash, lastValidBlockHeight: slot + 150n },
          m,
        ),
      (m) =>
        appendTransactionMessageInstructions(
          [{ programAddress: 'ComputeBudget111111111111111111111111111111' as Address, data: limit }, ...instructions],
          m,
        ),
      (m) => signTransactionMessageWithSigners(m),
    );
    return sendWireTransaction(new Uint8Array(getTransactionEncoder().encode(transaction)));
  }

  return {
    svm,
    /** The faucet: fee payer of the setup, SOL source of airdrops and mint authority of the test tokens. */
    faucet: faucet.address,
    mints,
    slot: slotAt,
    latestBlockhash: () => ({ blockhash: svm.latestBlockhash(), lastValidBlockHeight: slot + 150n }),
    sendWireTransaction,
    sendInstructions,
    /** The transaction, if it exists, is not dropped and has reached `commitment`. */
    transaction(signature: string, commitment: Commitment): StoredTransaction | undefined {
      const tx = bySignature.get(signature);
      return tx !== undefined && reaches(tx, commitment) ? tx : undefined;
    },
    /** The status a node reports for a signature (`getSignatureStatuses`), or undefined when unknown or dropped. */
    status(signature: string) {
      const tx = bySignature.get(signature);
      if (tx === undefined || tx.dropped) return undefined;
      return {
        tx,
        confirmationStatus: statusOf(tx),
        confirmations: tx.slot <= finalizedSlot ? null : Number(slot - tx.slot),
      };
    },
    /**
     * Signatures of transactions naming `address` (any account key, read-only references too),
     * newest first, after `before` and down to (not including) `until`, at most `limit`.
     */
    signaturesForAddress(
      address: string,
      query: { commitment: Commitment; before?: string; until?: string; limit: number },
    ): { tx: StoredTransaction; confirmationStatus: Commitment }[] {
      const found: { tx: StoredTransaction; confirmationStatus: Commitment }[] = [];
      let started = query.before === undefined;
      for (let i = transactions.length - 1; i >= 0 && found.length < query.limit; i--) {
        const tx = transactions[i] as StoredTransaction;
        if (tx.signature === query.until) break;
        if (!started) {
          started = tx.signature === query.before;
          continue;
        }
        if (reaches(tx, query.commitment) && tx.accountKeys.includes(address as Address))
          found.push({ tx, confirmationStatus: statusOf(tx) });
      }
      return found;
    },
    /** SOL from the faucet, sent as a real System transfer (so it has a signature and a slot). */
    airdrop(to: Address, amount: bigint): Promise<Signature> {
      return sendInstructions([getTransferSolInstruction({ source: faucet, destination: to, amount })]);
    },
    /** Test tokens into `owner`'s associated token account (created when missing). */
    async mintTo(owner: Address, asset: LocalAsset, amount: bigint): Promise<Signature> {
      const mint = mints[asset];
      const [ata] = await findAssociatedTokenPda({ owner, mint, tokenProgram: TOKEN_PROGRAM_ADDRESS });
      return sendInstructions([
        getCreateAssociatedTokenIdempotentInstruction({ payer: faucet, ata, owner, mint }),
        getMintToInstruction({ mint, token: ata, mintAuthority: faucet, amount }),
      ]);
    },
    /** Runs `send`, whose transactions all land in one slot (a busy cluster's block holds many). */
    async sameSlot<T>(send: () => Promise<T>): Promise<T> {
      sharing = { slot: null };
      try {
        return await send();
      } finally {
        sharing = null;
      }
    },
    /**
     * The fork holding `signature` (not finalized) is abandoned and the transaction lands again, in
     * a new slot of the fork the cluster keeps, where it fails (what it spent was spent there
     * first): a node reports it in that slot with `err`, and it moved nothing (the ledger charges
     * no fee again).
     */
    landAgainFailed(signature: string, err: TransactionErrorJson = { InstructionError: [0, { Custom: 1 }] }): void {
      const tx = bySignature.get(signature);
      if (tx === undefined || tx.dropped) throw new LocalSolanaRpcError(-32602, `unknown transaction ${signature}`);
      if (statusOf(tx) === 'finalized') throw new LocalSolanaRpcError(-32602, `transaction ${signature} is finalized`);
      reverseBalances(svm, tx);
      slot += 1n;
      svm.warpToSlot(slot);
      if (RANK[arrival] >= RANK.confirmed) confirmedSlot = slot;
      if (arrival === 'finalized') finalizedSlot = slot;
      tx.slot = slot;
      tx.err = err;
      tx.states = { before: tx.states.before, after: tx.states.before };
      const meta = tx.metaJson;
      tx.metaJson = {
        ...meta,
        err,
        status: { Err: err },
        postBalances: meta.preBalances,
        postTokenBalances: meta.preTokenBalances,
      };
      // Newest last, as `signaturesForAddress` reads them.
      transactions.splice(transactions.indexOf(tx), 1);
      transactions.push(tx);
    },
    /** Marks transactions up to `upTo` (default: all) confirmed. */
    confirm(upTo: bigint = slot): void {
      const was = confirmedSlot;
      if (upTo > confirmedSlot) confirmedSlot = upTo > slot ? slot : upTo;
      reached('confirmed', inSlots(was, confirmedSlot));
    },
    /** Marks transactions up to `upTo` (default: all) finalized, and so confirmed. */
    finalize(upTo: bigint = slot): void {
      const target = upTo > slot ? slot : upTo;
      const was = { confirmed: confirmedSlot, finalized: finalizedSlot };
      if (target > finalizedSlot) finalizedSlot = target;
      if (finalizedSlot > confirmedSlot) confirmedSlot = finalizedSlot;
      reached('confirmed', inSlots(was.confirmed, confirmedSlot));
      reached('finalized', inSlots(was.finalized, finalizedSlot));
    },
    /** Calls `listener` with the transactions that reach a commitment as they reach it; returns its removal. */
    onReached(listener: ReachedListener): () => void {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    /**
     * Withdraws a transaction not yet finalized, as when the fork holding it is abandoned: no
     * query sees it again, and the balances it moved are moved back (the lamport and token
     * amount changes of its accounts are reversed; accounts it created stay, empty or not).
     */
    drop(signature: string): void {
      const tx = bySignature.get(signature);
      if (tx === undefined || tx.dropped) throw new LocalSolanaRpcError(-32602, `unknown transaction ${signature}`);
      if (statusOf(tx) === 'finalized') throw new LocalSolanaRpcError(-32602, `transaction ${signature} is finalized`);
      tx.dropped = true;
      reverseBalances(svm, tx);
    },
  };
}

const RANK: Record<Commitment, number> = { processed: 0, confirmed: 1, finalized: 2 };

export type AccountState = {
  lamports: bigint;
  token?: { program: Address; mint: Address; owner: Address; amount: bigint; decimals: number };
};

/** Lamports and, for a token account, its token balance (decimals read from its mint). */
function accountState(svm: LiteSVM, key: Address): AccountState {
  const account = svm.getAccount(key);
  if (!account.exists) return { lamports: 0n };
  const token = readTokenAccount(account.programAddress, account.data);
  if (token === undefined) return { lamports: account.lamports };
  const mint = svm.getAccount(token.mint);
  const decimals = mint.exists ? (mint.data[44] ?? 0) : 0;
  return { lamports: account.lamports, token: { ...token, program: account.programAddress, decimals } };
}

function readTokenAccount(program: Address, data: Uint8Array) {
  if (program !== TOKEN_PROGRAM_ADDRESS && program !== TOKEN_2022_PROGRAM_ADDRESS) return undefined;
  if (data.length !== 165 && !(data.length > 165 && data[165] === 2)) return undefined;
  const decoder = getAddressDecoder();
  return {
    mint: decoder.decode(data, 0),
    owner: decoder.decode(data, 32),
    amount: new DataView(data.buffer, data.byteOffset).getBigUint64(64, true),
  };
}

function tokenBalances(states: AccountState[]): TokenBalanceJson[] {
  return states.flatMap((state, accountIndex) => {
    if (state.token === undefined) return [];
    const { mint, owner, program, amount, decimals } = state.token;
    const ui = uiAmount(amount, decimals);
    return [
      {
        accountIndex,
        mint,
        owner,
        programId: program,
        uiTokenAmount: {
          amount: amount.toString(),
          decimals,
          uiAmount: amount === 0n ? null : Number(ui),
          uiAmountString: ui,
        },
      },
    ];
  });
}

/** `1500000` at 6 decimals is `1.5`, as nodes write `uiAmountString`. */
export function uiAmount(amount: bigint, decimals: number): string {
  const digits = amount.toString().padStart(decimals + 1, '0');
  const whole = digits.slice(0, digits.length - decimals);
  const fraction = digits.slice(digits.length - decimals).replace(/0+$/, '');
  return fraction === '' ? whole : `${whole}.${fraction}`;
}

/** The keys a v0 message loads from its lookup tables (table data: 56-byte header, then 32-byte addresses). */
function loadAddresses(
  svm: LiteSVM,
  message: ReturnType<ReturnType<typeof getCompiledTransactionMessageDecoder>['decode']>,
): { writable: Address[]; readonly: Address[] } {
  const writable: Address[] = [];
  const readonly: Address[] = [];
  if (message.version !== 0) return { writable, readonly };
  const decoder = getAddressDecoder();
  const lookups = message.addressTableLookups ?? [];
  for (const pass of ['writable', 'readonly'] as const) {
    for (const lookup of lookups) {
      const table = svm.getAccount(lookup.lookupTableAddress);
      if (!table.exists)
        throw new LocalSolanaRpcError(-32002, 'Transaction simulation failed: AddressLookupTableNotFound', {
          err: 'AddressLookupTableNotFound',
        });
      const indexes = pass === 'writable' ? lookup.writableIndexes : lookup.readonlyIndexes;
      for (const index of indexes) {
        const offset = 56 + index * 32;
        if (offset + 32 > table.data.length)
          throw new LocalSolanaRpcError(-32002, 'Transaction simulation failed: InvalidAddressLookupTableIndex', {
            err: 'InvalidAddressLookupTableIndex',
          });
        (pass === 'writable' ? writable : readonly).push(decoder.decode(table.data, offset));
      }
    }
  }
  return { writable, readonly };
}

function reverseBalances(svm: LiteSVM, tx: StoredTransaction): void {
  tx.accountKeys.forEach((key, index) => {
    const account = svm.getAccount(key);
    const before = tx.states.before[index];
    const after = tx.states.after[index];
    if (!account.exists || before === undefined || after === undefined) return;
    const lamportsNow = account.lamports + before.lamports - after.lamports;
    const data = new Uint8Array(account.data);
    if (after.token !== undefined && readTokenAccount(account.programAddress, data) !== undefined) {
      const view = new DataView(data.buffer, data.byteOffset);
      const amount = view.getBigUint64(64, true) + (before.token?.amount ?? 0n) - after.token.amount;
      view.setBigUint64(64, amount < 0n ? 0n : amount, true);
    }
    svm.setAccount({ ...account, lamports: lamports(lamportsNow < 0n ? 0n : lamportsNow), data });
  });
}

const base58 = (bytes: ReadonlyUint8Array) => getBase58Decoder().decode(bytes);
export const base64 = (bytes: Uint8Array) => getBase64Decoder().decode(bytes);
