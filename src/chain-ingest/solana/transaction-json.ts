import { AccountRole, getBase58Encoder, isAddress, type Address, type Instruction } from '@solana/kit';
import { z } from 'zod';

/*
 * The answer of `getTransaction(signature, { encoding: 'json', maxSupportedTransactionVersion: 0 })`,
 * the request the Solana follower makes: compiled instructions (account indexes, base58 data)
 * rather than `jsonParsed`, so nothing depends on the node's instruction parsers, and the same
 * shape as `@solana/kit`'s `GetTransactionApiResponseJson`. Integers are read as JSON numbers
 * (a raw answer) or bigints (kit's RPC client turns u64 fields into bigints).
 */

const integer = z.union([z.number().int().nonnegative(), z.bigint().nonnegative()]);
const u64 = integer.transform((value) => BigInt(value));
const index = integer.transform((value) => Number(value));
const address = z.custom<Address>((value) => typeof value === 'string' && isAddress(value), 'a base58 address');

const TokenBalanceSchema = z.object({
  accountIndex: index,
  mint: address,
  owner: address.optional(),
  programId: address.optional(),
  uiTokenAmount: z.object({ amount: z.string().regex(/^[0-9]+$/), decimals: index }),
});

const CompiledInstructionSchema = z.object({
  programIdIndex: index,
  accounts: z.array(index),
  data: z.string(),
});

export const GetTransactionJsonSchema = z.object({
  slot: u64,
  blockTime: u64.nullable(),
  version: z.union([z.literal('legacy'), integer]).optional(),
  transaction: z.object({
    signatures: z.array(z.string()).min(1),
    message: z.object({
      accountKeys: z.array(address).min(1),
      header: z.object({
        numRequiredSignatures: index,
        numReadonlySignedAccounts: index,
        numReadonlyUnsignedAccounts: index,
      }),
      instructions: z.array(CompiledInstructionSchema),
      recentBlockhash: z.string(),
      addressTableLookups: z
        .array(z.object({ accountKey: address, writableIndexes: z.array(index), readonlyIndexes: z.array(index) }))
        .optional(),
    }),
  }),
  meta: z
    .object({
      err: z.unknown(),
      fee: u64,
      preBalances: z.array(u64),
      postBalances: z.array(u64),
      preTokenBalances: z.array(TokenBalanceSchema).optional(),
      postTokenBalances: z.array(TokenBalanceSchema).optional(),
      loadedAddresses: z.object({ writable: z.array(address), readonly: z.array(address) }).optional(),
      // Null when the node did not record them (old ledgers): then only top-level instructions are known.
      innerInstructions: z
        .array(z.object({ index, instructions: z.array(CompiledInstructionSchema) }))
        .nullable()
        .optional(),
    })
    .nullable(),
});

export type GetTransactionJson = z.infer<typeof GetTransactionJsonSchema>;
export type TokenBalanceJson = z.infer<typeof TokenBalanceSchema>;

/** A confirmed transaction with its instructions resolved against every account key. */
export type DecodedTransaction = {
  signature: string;
  slot: bigint;
  blockTime: bigint | null;
  /** Static keys, then the writable and read-only keys loaded from lookup tables: what meta indexes. */
  accountKeys: readonly Address[];
  /** Top-level instructions, in order. */
  instructions: readonly DecodedInstruction[];
  /** The instructions each top-level instruction invoked (CPI), by its index, in execution order; empty when none (or not recorded). */
  innerInstructions: readonly (readonly DecodedInstruction[])[];
  meta: NonNullable<GetTransactionJson['meta']>;
};

export type DecodedInstruction = Instruction<Address> & {
  accounts: readonly { address: Address; role: AccountRole }[];
  data: Uint8Array;
  /** Index into `accountKeys` of each account, in the instruction's order. */
  accountIndexes: readonly number[];
};

/** The answer is not a transaction in the expected shape; the message says where. */
export class TransactionJsonError extends Error {
  override name = 'TransactionJsonError';
}

/**
 * Checks a `getTransaction` answer (`json` encoding) and resolves its instructions. Throws a
 * `TransactionJsonError` for a malformed answer or a missing meta; returns null for `null` (not
 * found, or not at the requested commitment).
 */
export function decodeTransactionJson(answer: unknown): DecodedTransaction | null {
  if (answer === null) return null;
  const parsed = GetTransactionJsonSchema.safeParse(answer);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new TransactionJsonError(
      `not a getTransaction json answer: ${issue?.path.join('.') || '(root)'}: ${issue?.message ?? 'invalid'}`,
    );
  }
  const { transaction, meta } = parsed.data;
  if (meta === null) throw new TransactionJsonError('the answer has no meta (the node did not record its status)');
  const { message } = transaction;
  const lookups = message.addressTableLookups ?? [];
  const loaded = meta.loadedAddresses ?? { writable: [], readonly: [] };
  const expectedLoaded = lookups.reduce((n, l) => n + l.writableIndexes.length + l.readonlyIndexes.length, 0);
  if (loaded.writable.length + loaded.readonly.length !== expectedLoaded)
    throw new TransactionJsonError(
      `meta.loadedAddresses holds ${loaded.writable.length + loaded.readonly.length} keys but the lookups name ${expectedLoaded}`,
    );
  const accountKeys = [...message.accountKeys, ...loaded.writable, ...loaded.readonly];
  if (meta.preBalances.length !== accountKeys.length || meta.postBalances.length !== accountKeys.length)
    throw new TransactionJsonError(
      `meta has ${meta.preBalances.length}/${meta.postBalances.length} balances for ${accountKeys.length} account keys`,
    );
  const roleOf = accountRoles(message.header, message.accountKeys.length, loaded.writable.length);
  const keyAt = (i: number, where: string): Address => {
    const key = accountKeys[i];
    if (key === undefined) throw new TransactionJsonError(`${where}: account index ${i} is out of range`);
    return key;
  };
  const base58 = getBase58Encoder();
  const decode = (compiled: z.infer<typeof CompiledInstructionSchema>, where: string): DecodedInstruction => {
    let data: Uint8Array;
    try {
      data = new Uint8Array(base58.encode(compiled.data));
    } catch {
      throw new TransactionJsonError(`${where}: data is not base58`);
    }
    return {
      programAddress: keyAt(compiled.programIdIndex, where),
      accounts: compiled.accounts.map((i) => ({ address: keyAt(i, where), role: roleOf(i) })),
      accountIndexes: compiled.accounts,
      data,
    };
  };
  const instructions = message.instructions.map((compiled, n) => decode(compiled, `instruction ${n}`));
  const innerInstructions: DecodedInstruction[][] = instructions.map(() => []);
  for (const inner of meta.innerInstructions ?? []) {
    const into = innerInstructions[inner.index];
    if (into === undefined)
      throw new TransactionJsonError(`meta.innerInstructions: instruction ${inner.index} is out of range`);
    into.push(...inner.instructions.map((compiled, n) => decode(compiled, `inner instruction ${inner.index}.${n}`)));
  }
  return {
    signature: transaction.signatures[0] ?? '',
    slot: parsed.data.slot,
    blockTime: parsed.data.blockTime,
    accountKeys,
    instructions,
    innerInstructions,
    meta,
  };
}

/** Each account's role from the message header (signers first, then writable before read-only). */
function accountRoles(
  header: GetTransactionJson['transaction']['message']['header'],
  staticCount: number,
  loadedWritable: number,
): (i: number) => AccountRole {
  const signers = header.numRequiredSignatures;
  const writableSigners = signers - header.numReadonlySignedAccounts;
  const writableUnsigned = staticCount - header.numReadonlyUnsignedAccounts;
  return (i) => {
    if (i < writableSigners) return AccountRole.WRITABLE_SIGNER;
    if (i < signers) return AccountRole.READONLY_SIGNER;
    if (i < writableUnsigned) return AccountRole.WRITABLE;
    if (i < staticCount) return AccountRole.READONLY;
    return i < staticCount + loadedWritable ? AccountRole.WRITABLE : AccountRole.READONLY;
  };
}
