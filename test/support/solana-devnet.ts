import type { ExecutionContext } from 'ava';
import {
  AccountRole,
  appendTransactionMessageInstructions,
  compressTransactionMessageUsingAddressLookupTables,
  createSolanaRpc,
  createTransactionMessage,
  generateKeyPairSigner,
  getBase64EncodedWireTransaction,
  lamports,
  pipe,
  setTransactionMessageFeePayerSigner,
  setTransactionMessageLifetimeUsingBlockhash,
  signTransactionMessageWithSigners,
  type Address,
  type Instruction,
  type KeyPairSigner,
  type Signature,
} from '@solana/kit';
import { getTransferSolInstruction } from '@solana-program/system';
import {
  findAssociatedTokenPda,
  getCreateAssociatedTokenIdempotentInstruction,
  getTransferCheckedInstruction,
} from '@solana-program/token';
import { TOKEN_PROGRAM_ADDRESS } from '../../src/chain-ingest/solana/define-network.ts';
import type { LocalSolanaOptions } from '../../src/chain-ingest/solana/devnet/local-ledger.ts';
import { startLocalSolana } from '../../src/chain-ingest/solana/devnet/rpc-server.ts';

export type SendOptions = {
  /** Send without preflight, so a failing transaction lands (failed) as on a real cluster. */
  skipPreflight?: boolean;
  /** Address lookup tables to compress the message with (table address to its addresses). */
  lookupTables?: Record<Address, Address[]>;
};

/** The local Solana on a free port with a kit RPC client, stopped when the test ends. */
export async function startTestSolana(t: Pick<ExecutionContext, 'teardown'>, options: LocalSolanaOptions = {}) {
  const server = await startLocalSolana({ port: 0, ...options });
  t.teardown(() => server.stop());
  const rpc = createSolanaRpc(server.rpcUrl);
  const ata = async (owner: Address, mint: Address) =>
    (await findAssociatedTokenPda({ owner, mint, tokenProgram: TOKEN_PROGRAM_ADDRESS }))[0];
  /** The `json` answer Weir's follower asks for. */
  const getTransaction = (signature: Signature, commitment: 'confirmed' | 'finalized' = 'confirmed') =>
    rpc.getTransaction(signature, { encoding: 'json', maxSupportedTransactionVersion: 0, commitment }).send();

  /** A wallet with 2 SOL and 100 test USDC and USDT that pays as a Solana Pay wallet does. */
  async function newPayer() {
    const signer: KeyPairSigner = await generateKeyPairSigner();
    await rpc.requestAirdrop(signer.address, lamports(2_000_000_000n)).send();
    await server.ledger.mintTo(signer.address, 'usdc', 100_000_000n);
    await server.ledger.mintTo(signer.address, 'usdt', 100_000_000n);

    /** Signs `instructions` (fee payer: this wallet) and sends them through the RPC. */
    async function send(instructions: Instruction[], sendOptions: SendOptions = {}): Promise<Signature> {
      const { value: blockhash } = await rpc.getLatestBlockhash().send();
      const message = pipe(
        createTransactionMessage({ version: 0 }),
        (m) => setTransactionMessageFeePayerSigner(signer, m),
        (m) => setTransactionMessageLifetimeUsingBlockhash(blockhash, m),
        (m) => appendTransactionMessageInstructions(instructions, m),
      );
      const signed = await signTransactionMessageWithSigners(
        sendOptions.lookupTables === undefined
          ? message
          : compressTransactionMessageUsingAddressLookupTables(message, sendOptions.lookupTables),
      );
      return rpc
        .sendTransaction(getBase64EncodedWireTransaction(signed), {
          encoding: 'base64',
          ...(sendOptions.skipPreflight ? { skipPreflight: true } : {}),
        })
        .send();
    }

    const withReferences = <T extends Instruction & { accounts: readonly { address: Address; role: AccountRole }[] }>(
      instruction: T,
      references: readonly Address[],
    ) => ({
      ...instruction,
      accounts: [...instruction.accounts, ...references.map((address) => ({ address, role: AccountRole.READONLY }))],
    });

    return {
      signer,
      address: signer.address,
      send,
      /**
       * A Solana Pay token transfer: the recipient's associated token account created if missing,
       * then `TransferChecked` (6 decimals) carrying `references` as read-only accounts.
       */
      async payToken(
        mint: Address,
        recipient: Address,
        amount: bigint,
        references: readonly Address[],
        sendOptions: SendOptions = {},
      ): Promise<Signature> {
        const destination = await ata(recipient, mint);
        const transfer = getTransferCheckedInstruction({
          source: await ata(signer.address, mint),
          mint,
          destination,
          authority: signer,
          amount,
          decimals: 6,
        });
        return send(
          [
            getCreateAssociatedTokenIdempotentInstruction({ payer: signer, ata: destination, owner: recipient, mint }),
            withReferences(transfer, references),
          ],
          sendOptions,
        );
      },
      /** A Solana Pay SOL transfer carrying `references`. */
      paySol(recipient: Address, amount: bigint, references: readonly Address[], sendOptions: SendOptions = {}) {
        const transfer = getTransferSolInstruction({ source: signer, destination: recipient, amount });
        return send([withReferences(transfer, references)], sendOptions);
      },
    };
  }

  return { server, rpc, ata, getTransaction, newPayer };
}
