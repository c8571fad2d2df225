import {
  AccountRole,
  appendTransactionMessageInstructions,
  compileTransaction,
  createNoopSigner,
  createSolanaRpc,
  createTransactionMessage,
  getBase64EncodedWireTransaction,
  isAddress,
  pipe,
  setTransactionMessageFeePayerSigner,
  setTransactionMessageLifetimeUsingBlockhash,
  type Address,
  type Instruction,
} from '@solana/kit';
import { getTransferSolInstruction } from '@solana-program/system';
import {
  findAssociatedTokenPda,
  getCreateAssociatedTokenIdempotentInstruction,
  getTransferCheckedInstruction,
} from '@solana-program/token';
import { TOKEN_PROGRAM_ADDRESS, type SolanaNetwork } from './define-network.ts';

/** What a payer's wallet is asked to sign: the session's Solana Pay transfer, built for its account. */
export type PayTransactionRequest = {
  network: string;
  /** The payer's wallet (fee payer and source). */
  account: string;
  /** The merchant's wallet. */
  recipient: string;
  /** The mint, or `native` for SOL. */
  mint: string;
  decimals: number;
  amount: bigint;
  reference: string;
};

export type PayTransactionBuilder = (
  request: PayTransactionRequest,
) => Promise<{ transaction: string; chain: `solana:${string}` }>;

/**
 * Builds, for "pay from a Solana wallet" on the hosted page, the unsigned transaction a Solana Pay
 * wallet would build from the transfer request: for a token, the merchant's associated token account
 * created if missing, then `TransferChecked` from the payer's; for SOL, `TransferSol`; the reference
 * as a read-only account of the transfer. The payer's wallet signs and sends it (Wallet Standard
 * `solana:signAndSendTransaction`); Weir never holds a key.
 */
export function createPayTransactionBuilder(
  networks: readonly { network: SolanaNetwork; rpcUrl: string }[],
): PayTransactionBuilder {
  const rpcs = new Map(networks.map((n) => [n.network.network, { ...n, rpc: createSolanaRpc(n.rpcUrl) }]));
  return async (request) => {
    const found = rpcs.get(request.network);
    if (!found) throw new Error(`no Solana network ${request.network} here`);
    for (const value of [request.account, request.recipient, request.reference])
      if (!isAddress(value)) throw new Error(`${value} is not a Solana address`);
    const payer = createNoopSigner(request.account as Address);
    const recipient = request.recipient as Address;
    const reference = { address: request.reference as Address, role: AccountRole.READONLY };
    let instructions: Instruction[];
    if (request.mint === 'native') {
      const transfer = getTransferSolInstruction({ source: payer, destination: recipient, amount: request.amount });
      instructions = [{ ...transfer, accounts: [...transfer.accounts, reference] }];
    } else {
      const asset = found.network.assets.find((a) => a.address === request.mint);
      const tokenProgram = asset?.tokenProgram ?? TOKEN_PROGRAM_ADDRESS;
      const mint = request.mint as Address;
      const [destination] = await findAssociatedTokenPda({ owner: recipient, mint, tokenProgram });
      const [source] = await findAssociatedTokenPda({ owner: payer.address, mint, tokenProgram });
      const transfer = getTransferCheckedInstruction(
        { source, mint, destination, authority: payer, amount: request.amount, decimals: request.decimals },
        { programAddress: tokenProgram },
      );
      instructions = [
        getCreateAssociatedTokenIdempotentInstruction({
          payer,
          ata: destination,
          owner: recipient,
          mint,
          tokenProgram,
        }),
        { ...transfer, accounts: [...transfer.accounts, reference] },
      ];
    }
    const { value: blockhash } = await found.rpc.getLatestBlockhash({ commitment: 'confirmed' }).send();
    const message = pipe(
      createTransactionMessage({ version: 0 }),
      (m) => setTransactionMessageFeePayerSigner(payer, m),
      (m) => setTransactionMessageLifetimeUsingBlockhash(blockhash, m),
      (m) => appendTransactionMessageInstructions(instructions, m),
    );
    return {
      transaction: getBase64EncodedWireTransaction(compileTransaction(message)),
      chain: found.network.walletChain,
    };
  };
}
