import test from 'ava';
import {
  createSolanaRpcFromTransport,
  generateKeyPairSigner,
  getAddressEncoder,
  getBase64Decoder,
  type Address,
  type RpcTransport,
} from '@solana/kit';
import { findAssociatedTokenPda } from '@solana-program/token';
import { merchantWalletProblem, solanaAddressProblem, walletAddressProblem } from './address.ts';
import { TOKEN_2022_PROGRAM_ADDRESS, TOKEN_PROGRAM_ADDRESS } from './define-network.ts';
import { solanaMainnet } from './networks.ts';

const USDC = solanaMainnet.assets[1]!.address as Address;

/** A kit RPC whose `getAccountInfo` answers from `accounts` (missing = no account), as a node would. */
function rpcWith(accounts: Record<string, { owner: string; data: Uint8Array; executable?: boolean }>) {
  const transport: RpcTransport = async <T>({ payload }: { payload: unknown }) => {
    const { id, params } = payload as { id: number; params: [string] };
    const account = accounts[params[0]];
    const value =
      account === undefined
        ? null
        : {
            data: [getBase64Decoder().decode(account.data), 'base64'],
            executable: account.executable ?? false,
            lamports: 2_039_280,
            owner: account.owner,
            rentEpoch: 18_446_744_073_709_551_615n,
            space: account.data.length,
          };
    return { jsonrpc: '2.0', id, result: { context: { slot: 1 }, value } } as T;
  };
  return createSolanaRpcFromTransport(transport);
}

function tokenAccountData(mint: Address, owner: Address, extensions = 0): Uint8Array {
  const data = new Uint8Array(165 + (extensions > 0 ? 1 + extensions : 0));
  data.set(getAddressEncoder().encode(mint), 0);
  data.set(getAddressEncoder().encode(owner), 32);
  if (extensions > 0) data[165] = 2;
  return data;
}

test('an address is base58 of exactly 32 bytes', (t) => {
  t.is(solanaAddressProblem(USDC), null);
  t.is(
    solanaAddressProblem('0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48'),
    'must be a base58 Solana address of 32 bytes',
  );
  t.not(solanaAddressProblem('EPjFWdd5AufqSSqeM2qN1xzybapC8G4'), null, 'too short for 32 bytes');
  t.not(solanaAddressProblem('EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt10'), null, '0 is not base58');
});

test('a wallet lies on the ed25519 curve; an associated token account does not', async (t) => {
  const wallet = (await generateKeyPairSigner()).address;
  t.is(walletAddressProblem(wallet), null);
  const [ata] = await findAssociatedTokenPda({ owner: wallet, mint: USDC, tokenProgram: TOKEN_PROGRAM_ADDRESS });
  t.regex(walletAddressProblem(ata) ?? '', /off the ed25519 curve/);
  t.is(walletAddressProblem('nope'), 'must be a base58 Solana address of 32 bytes');
});

test('a token account given as the merchant wallet names the wallet that owns it', async (t) => {
  const wallet = (await generateKeyPairSigner()).address;
  const [ata] = await findAssociatedTokenPda({ owner: wallet, mint: USDC, tokenProgram: TOKEN_PROGRAM_ADDRESS });
  const keypairTokenAccount = (await generateKeyPairSigner()).address;
  const token2022Account = (await generateKeyPairSigner()).address;
  const rpc = rpcWith({
    [ata]: { owner: TOKEN_PROGRAM_ADDRESS, data: tokenAccountData(USDC, wallet) },
    [keypairTokenAccount]: { owner: TOKEN_PROGRAM_ADDRESS, data: tokenAccountData(USDC, wallet) },
    [token2022Account]: { owner: TOKEN_2022_PROGRAM_ADDRESS, data: tokenAccountData(USDC, wallet, 12) },
  });
  const expected = `is a token account (of mint ${USDC}); give the wallet that owns it, ${wallet}`;
  t.is(await merchantWalletProblem(rpc, ata), expected);
  t.is(await merchantWalletProblem(rpc, keypairTokenAccount), expected, 'an on-curve token account is caught on chain');
  t.is(await merchantWalletProblem(rpc, token2022Account), expected, 'a Token-2022 account with extensions');
});

test('a fresh or System-owned wallet is fine; a mint, a program or another program account is not', async (t) => {
  const fresh = (await generateKeyPairSigner()).address;
  const funded = (await generateKeyPairSigner()).address;
  const stake = (await generateKeyPairSigner()).address;
  const [pda] = await findAssociatedTokenPda({ owner: fresh, mint: USDC, tokenProgram: TOKEN_PROGRAM_ADDRESS });
  const rpc = rpcWith({
    [funded]: { owner: '11111111111111111111111111111111', data: new Uint8Array() },
    [USDC]: { owner: TOKEN_PROGRAM_ADDRESS, data: new Uint8Array(82) },
    [TOKEN_PROGRAM_ADDRESS]: {
      owner: 'BPFLoader2111111111111111111111111111111111',
      data: new Uint8Array(),
      executable: true,
    },
    [stake]: { owner: 'Stake11111111111111111111111111111111111111', data: new Uint8Array(200) },
  });
  t.is(await merchantWalletProblem(rpc, fresh), null);
  t.is(await merchantWalletProblem(rpc, funded), null);
  t.is(await merchantWalletProblem(rpc, USDC), 'is a token mint, not a wallet');
  t.is(await merchantWalletProblem(rpc, TOKEN_PROGRAM_ADDRESS), 'is a program, not a wallet');
  t.is(
    await merchantWalletProblem(rpc, stake),
    'is an account of program Stake11111111111111111111111111111111111111, not a wallet',
  );
  t.regex((await merchantWalletProblem(rpc, pda)) ?? '', /off the ed25519 curve/, 'an empty off-curve address');
  t.is(await merchantWalletProblem(rpc, 'x'), 'must be a base58 Solana address of 32 bytes');
});
