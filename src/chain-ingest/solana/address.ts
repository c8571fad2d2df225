import {
  getAddressDecoder,
  getBase64Encoder,
  isAddress,
  isOffCurveAddress,
  type Address,
  type GetAccountInfoApi,
  type Rpc,
} from '@solana/kit';
import { SYSTEM_PROGRAM_ADDRESS, TOKEN_2022_PROGRAM_ADDRESS, TOKEN_PROGRAM_ADDRESS } from './define-network.ts';

/** Why `value` is not a Solana address (base58 of exactly 32 bytes), or null when it is one. */
export function solanaAddressProblem(value: string): string | null {
  return isAddress(value) ? null : 'must be a base58 Solana address of 32 bytes';
}

/**
 * Why `value` cannot be a wallet (a key someone holds), or null when it can: besides being an
 * address it must lie on the ed25519 curve. Program-derived addresses (token accounts, vaults)
 * lie off it: nobody can sign for them, and wallets refuse them as Solana Pay recipients.
 */
export function walletAddressProblem(value: string): string | null {
  if (!isAddress(value)) return 'must be a base58 Solana address of 32 bytes';
  if (isOffCurveAddress(value))
    return 'is off the ed25519 curve (a program-derived address, such as a token account), not a wallet';
  return null;
}

/** What an address holds on chain, as far as paying to it is concerned. */
export type SolanaAccountKind =
  /** Nothing there yet, or a plain System account: a wallet can be paid. */
  | { kind: 'wallet' }
  | { kind: 'token-account'; program: Address; mint: Address; owner: Address }
  | { kind: 'mint'; program: Address }
  | { kind: 'program' }
  /** Data owned by another program (a stake account, a vault, ...). */
  | { kind: 'program-owned'; program: Address };

/** Size of an SPL Token account; Token-2022 accounts with extensions are longer. */
const TOKEN_ACCOUNT_SIZE = 165;
/** Size of an SPL Token mint. */
const MINT_SIZE = 82;
/** Token-2022 writes `AccountType` (1 = mint, 2 = account) at this offset when extensions follow. */
const ACCOUNT_TYPE_OFFSET = 165;

/** What `address` is on the cluster `rpc` talks to (read at `confirmed`). */
export async function inspectSolanaAccount(rpc: Rpc<GetAccountInfoApi>, address: Address): Promise<SolanaAccountKind> {
  const { value } = await rpc.getAccountInfo(address, { encoding: 'base64', commitment: 'confirmed' }).send();
  if (value === null) return { kind: 'wallet' };
  if (value.executable) return { kind: 'program' };
  const program = value.owner;
  if (program !== TOKEN_PROGRAM_ADDRESS && program !== TOKEN_2022_PROGRAM_ADDRESS) {
    return program === SYSTEM_PROGRAM_ADDRESS ? { kind: 'wallet' } : { kind: 'program-owned', program };
  }
  const data = getBase64Encoder().encode(value.data[0]);
  const type = data.length > ACCOUNT_TYPE_OFFSET ? data[ACCOUNT_TYPE_OFFSET] : undefined;
  if (data.length === TOKEN_ACCOUNT_SIZE || type === 2) {
    const decoder = getAddressDecoder();
    return { kind: 'token-account', program, mint: decoder.decode(data, 0), owner: decoder.decode(data, 32) };
  }
  if (data.length === MINT_SIZE || type === 1) return { kind: 'mint', program };
  return { kind: 'program-owned', program };
}

/**
 * Why a merchant cannot take Solana payments at `address`, or null when it can: it must be a
 * wallet on the ed25519 curve holding no token account, mint or program. The chain is read first
 * so that a token account (usually an off-curve associated token account) is named as such, with
 * the wallet that owns it: the address to give instead.
 */
export async function merchantWalletProblem(rpc: Rpc<GetAccountInfoApi>, address: string): Promise<string | null> {
  if (!isAddress(address)) return solanaAddressProblem(address);
  const account = await inspectSolanaAccount(rpc, address);
  switch (account.kind) {
    case 'wallet':
      return walletAddressProblem(address);
    case 'token-account':
      return `is a token account (of mint ${account.mint}); give the wallet that owns it, ${account.owner}`;
    case 'mint':
      return 'is a token mint, not a wallet';
    case 'program':
      return 'is a program, not a wallet';
    case 'program-owned':
      return `is an account of program ${account.program}, not a wallet`;
  }
}
