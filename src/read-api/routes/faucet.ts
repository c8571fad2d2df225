import Router from '@koa/router';
import { getAddress } from 'viem';
import type { DevnetInfo } from '../../chain-ingest/evm/devnet/devnet-info.ts';
import { faucetAssets, fundFromFaucet, type FaucetAsset } from '../../chain-ingest/evm/devnet/faucet.ts';
import { shownTransactionHash } from '../../chain-ingest/network-definition.ts';
import type { Rail } from '../../chain-ingest/rail.ts';
import { SOLANA_LOCALNET_CHAIN_ID } from '../../chain-ingest/solana/networks.ts';
import { tronAddressProblem } from '../../chain-ingest/tron/address.ts';
import {
  fundFromTronFaucet,
  tronFaucetAssets,
  type TronFaucetAsset,
} from '../../chain-ingest/tron/devnet/tron-faucet.ts';
import { FaucetError, FaucetRefusedError } from '../../chain-ingest/evm/devnet/errors.ts';
import { ForbiddenError, UpstreamError, ValidationError } from '../../shared/errors.ts';
import { EVM_ADDRESS } from '../../shared/evm-address.ts';
import { toChainUnits, AmountError } from '../../shared/money.ts';
import type { ApiState } from '../api-context.ts';
import {
  amount,
  amountString,
  bodyObject,
  invalidFields,
  oneOf,
  optional,
  requiredText,
  withCode,
  z,
} from '../schema/fields.ts';
import { schemaRoutes } from '../schema/route.ts';

const DECIMALS: Record<FaucetAsset | TronFaucetAsset, number> = { eth: 18, trx: 6, usdc: 6, usdt: 6, dai: 18 };
const MAX_FAUCET_AMOUNT = 10_000n * 10n ** 8n;
/** Every asset some faucet gives: the EVM devnet's, then the local Tron's TRX. */
const ALL_ASSETS = [...faucetAssets, 'trx'] as const;
/** An EVM address, or a Tron one (T…, checked in full by the route): the address says which chain. */
const FAUCET_ADDRESS = new RegExp(`${EVM_ADDRESS.source}|^T[1-9A-HJ-NP-Za-km-z]{33}$`);

const FaucetRequest = bodyObject({
  address: requiredText({
    pattern: FAUCET_ADDRESS,
    hint: 'must be an EVM address (0x and 40 hex digits), or a Tron address (T…) for the local Tron',
  }),
  asset: optional(oneOf(ALL_ASSETS)),
  amount: amount()
    .refine(
      (v) => v > 0n && v <= MAX_FAUCET_AMOUNT,
      withCode('must be between 1 and 10000 tokens (10^8-scaled: 1 to 1000000000000)'),
    )
    .optional(),
}).openapi('FaucetRequest', { example: { address: '0x52908400098527886e0f7030069857d2e4169ee7', asset: 'usdc' } });

/**
 * How an operator gets a faucet, in the API's answer and the dashboard's: the faucet gives on the local
 * EVM chain and the local Tron, so WEIR_LOCAL_CHAIN's list form must name one of them.
 */
export const FAUCET_START_HINT =
  'start Weir with its local chains (WEIR_LOCAL_CHAIN=on, the default, or a list naming evm or tron, such as evm,solana) or with --devnet FILE';

/** What the faucet gives when a request names no asset, by the chain its address is on (the dashboard's form says the same). */
export const FAUCET_DEFAULT_ASSET = { evm: 'usdc', tron: 'usdt' } as const satisfies {
  evm: FaucetAsset;
  tron: TronFaucetAsset;
};

/**
 * Whether the test environment offers the local Solana (its network is not one the faucet gives on),
 * and the names of the test networks offered beside it (public testnets, such as WEIR_RPC_84532's):
 * null when it is not offered.
 */
export type LocalSolanaOffer = { beside: readonly string[] } | null;

/**
 * Why a server has no faucet, for the API's answer and the dashboard's: neither chain it gives on
 * runs. A server offering the local Solana (WEIR_LOCAL_CHAIN=solana) is told that chain is not one,
 * and how a Solana wallet is funded there instead; "only" when no other test network runs beside it.
 */
export const noFaucetReason = (localSolana: LocalSolanaOffer): string => {
  if (!localSolana) return 'it runs neither the local chain nor the local Tron';
  const offered =
    localSolana.beside.length === 0
      ? 'it offers only the local Solana'
      : `it offers the local Solana (beside ${localSolana.beside.join(', ')})`;
  return `${offered}, and the faucet gives on the local chain and the local Tron, neither of which runs (a Solana wallet is funded through the local Solana's RPC, logged at start: requestAirdrop for SOL, weir_mintTo for test USDC and USDT)`;
};

/** What the test environment offers of the local Solana, and beside it (`LocalSolanaOffer`). */
export const localSolanaOffer = (rail: Pick<Rail, 'networks'>): LocalSolanaOffer => {
  const networks = rail.networks('test');
  if (!networks.some((n) => n.chainId === SOLANA_LOCALNET_CHAIN_ID)) return null;
  return { beside: networks.filter((n) => n.chainId !== SOLANA_LOCALNET_CHAIN_ID).map((n) => n.name) };
};

/**
 * The local chains the faucet gives on, 0x form as their nodes run them: the EVM devnet and the local
 * Tron; and whether the local Solana is offered (named when neither runs).
 */
export type FaucetDevnets = {
  devnet: DevnetInfo | null;
  tronDevnet?: DevnetInfo | null;
  localSolana?: LocalSolanaOffer;
};

const FaucetAnswer = z
  .object({
    transactionHash: z
      .string()
      .openapi({ description: "As the chain's tools show it: 0x… on an EVM chain, the bare 64-hex txID on Tron" }),
    address: z.string(),
    asset: z.enum(ALL_ASSETS),
    amount: amountString(),
    amountRaw: z.string().openapi({ description: "In the token's own units" }),
    chainId: z.number().int(),
  })
  .openapi('FaucetAnswer');

/**
 * `POST /api/v1/faucet {address, asset, amount}`: test tokens on the devnet for test keys; a T…
 * address is funded on the local Tron (TRX, USDT, USDC). With no asset, `FAUCET_DEFAULT_ASSET` of the
 * address's chain. A live key is refused with 403.
 * `amount` is 10^8-scaled like every API amount (default 100 tokens).
 */
export function faucetRoutes(deps: FaucetDevnets): Router<ApiState> {
  const router = new Router<ApiState>({ prefix: '/api/v1/faucet' });
  const api = schemaRoutes(router, { tag: 'Faucet', auth: 'secretKey' });
  api.route(
    {
      method: 'post',
      path: '/',
      summary: 'Fund a wallet with test tokens',
      description: `On the local chain or devnet, for test keys only (\`${FAUCET_DEFAULT_ASSET.evm}\` unless \`asset\` says); a Tron address (T…) is funded on the local Tron (\`trx\`, \`usdt\` or \`usdc\`; \`${FAUCET_DEFAULT_ASSET.tron}\` unless said). \`amount\` is 10^8-scaled (default 100 tokens).`,
      // A live key, or a server without a chain, is answered before the body is read.
      before: (ctx) => {
        if (ctx.state.tenant.environment !== 'test')
          throw new ForbiddenError(
            'the faucet gives test tokens only; use a test key (sk_test_…)',
            'testmode_charges_only',
          );
        if (!deps.devnet && !deps.tronDevnet)
          throw new ValidationError(
            null,
            `no faucet on this server: ${noFaucetReason(deps.localSolana ?? null)}; ${FAUCET_START_HINT}`,
            'faucet_unavailable',
          );
      },
      body: FaucetRequest,
      response: FaucetAnswer,
      errors: [
        invalidFields('faucet_unavailable'),
        { status: 403, codes: ['testmode_charges_only'], description: 'A live key' },
        { status: 502, codes: ['faucet_failed'], description: 'The local chain did not take or mine the transfer' },
      ],
    },
    async (_ctx, { body }) => {
      const amount = body.amount ?? 100n * 10n ** 8n;
      const units = (asset: FaucetAsset | TronFaucetAsset) => {
        try {
          return toChainUnits(amount, DECIMALS[asset]);
        } catch (error) {
          if (error instanceof AmountError) throw new ValidationError('amount', error.message);
          throw error;
        }
      };
      const answer = (
        transactionHash: string,
        address: string,
        asset: FaucetAsset | TronFaucetAsset,
        raw: bigint,
        chainId: number,
      ) => ({
        transactionHash,
        address,
        asset,
        amount: amount.toString(),
        amountRaw: raw.toString(),
        chainId,
      });
      if (body.address.startsWith('T')) {
        const tron = onChain(deps.tronDevnet, 'the local Tron');
        const problem = tronAddressProblem(body.address);
        if (problem !== null) throw new ValidationError('address', problem);
        const asset = body.asset ?? FAUCET_DEFAULT_ASSET.tron;
        if (!isTronAsset(asset))
          throw new ValidationError('asset', `must be one of ${tronFaucetAssets.join(', ')} on the local Tron`);
        const raw = units(asset);
        const hash = await upstream(
          fundFromTronFaucet(tron, { to: body.address, asset, amount: raw }),
          body.address,
          asset,
        );
        // The node runs 0x hashes; a Tron txID is shown bare, as TronWeb and Tronscan take it.
        return answer(shownTransactionHash('tron', hash), body.address, asset, raw, tron.chainId);
      }
      const devnet = onChain(deps.devnet, 'the local chain');
      const asset = body.asset ?? FAUCET_DEFAULT_ASSET.evm;
      if (!isEvmAsset(asset))
        throw new ValidationError('asset', `must be one of ${faucetAssets.join(', ')} on the local chain`);
      const raw = units(asset);
      const address = getAddress(body.address);
      const hash = await upstream(fundFromFaucet(devnet, { to: address, asset, amount: raw }), address, asset);
      return answer(hash, address, asset, raw, devnet.chainId);
    },
  );
  return router;
}

const isTronAsset = (asset: string): asset is TronFaucetAsset =>
  (tronFaucetAssets as readonly string[]).includes(asset);
const isEvmAsset = (asset: string): asset is FaucetAsset => (faucetAssets as readonly string[]).includes(asset);

/**
 * The input was checked first: a faucet failing now is the chain's doing (down, or the transfer reverted),
 * a 502; but the coin refused by the contract `address` names is the request's, a 400 naming it.
 */
async function upstream<T>(funding: Promise<T>, address: string, asset: string): Promise<T> {
  try {
    return await funding;
  } catch (error) {
    if (error instanceof FaucetRefusedError)
      throw new ValidationError(
        'address',
        `${address} is a contract that takes no ${asset.toUpperCase()} (it reverted the transfer): fund an account, or ask for a token`,
      );
    if (error instanceof FaucetError) throw new UpstreamError(error.message, 'faucet_failed');
    throw error;
  }
}

/** The chain an address is funded on, or a 400 naming what this server lacks. */
function onChain(devnet: DevnetInfo | null | undefined, name: string): DevnetInfo {
  if (devnet) return devnet;
  throw new ValidationError('address', `no faucet for it on this server: ${name} is not running`, 'faucet_unavailable');
}
