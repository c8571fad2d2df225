import Router from '@koa/router';
import { getAddress } from 'viem';
import type { DevnetInfo } from '../../chain-ingest/evm/devnet/devnet-info.ts';
import { faucetAssets, fundFromFaucet, type FaucetAsset } from '../../chain-ingest/evm/devnet/faucet.ts';
import { ForbiddenError, ValidationError } from '../../shared/errors.ts';
import { asObject, EVM_ADDRESS, optionalEnum, requiredAmount, requiredString } from '../../shared/input.ts';
import { toChainUnits, AmountError } from '../../shared/money.ts';
import type { ApiState } from '../api-context.ts';

const DECIMALS: Record<FaucetAsset, number> = { eth: 18, usdc: 6, usdt: 6, dai: 18 };
const MAX_FAUCET_AMOUNT = 10_000n * 10n ** 8n;

/**
 * `POST /api/v1/faucet {address, asset, amount}`: test tokens on the devnet for test keys. A live
 * key is refused with 403. `amount` is 10^8-scaled like every API amount (default 100 tokens).
 */
export function faucetRoutes(deps: { devnet: DevnetInfo | null }): Router<ApiState> {
  const router = new Router<ApiState>({ prefix: '/api/v1/faucet' });
  router.post('/', async (ctx) => {
    if (ctx.state.tenant.environment !== 'test')
      throw new ForbiddenError(
        'the faucet gives test tokens only; use a test key (sk_test_…)',
        'testmode_charges_only',
      );
    if (!deps.devnet)
      throw new ValidationError(
        null,
        'no faucet on this server: start Weir with its local chain (WEIR_LOCAL_CHAIN=on, the default) or with --devnet FILE',
        'faucet_unavailable',
      );
    const body = asObject(ctx.state.body, '');
    const address = requiredString(body, 'address', '', {
      pattern: EVM_ADDRESS,
      hint: 'must be an EVM address (0x and 40 hex digits)',
    });
    const asset = optionalEnum(body, 'asset', faucetAssets) ?? 'usdc';
    const amount = body.amount === undefined ? 100n * 10n ** 8n : requiredAmount(body, 'amount');
    if (amount === 0n || amount > MAX_FAUCET_AMOUNT)
      throw new ValidationError('amount', 'must be between 1 and 10000 tokens (10^8-scaled: 1 to 1000000000000)');
    let units: bigint;
    try {
      units = toChainUnits(amount, DECIMALS[asset]);
    } catch (error) {
      if (error instanceof AmountError) throw new ValidationError('amount', error.message);
      throw error;
    }
    const transactionHash = await fundFromFaucet(deps.devnet, { to: getAddress(address), asset, amount: units });
    ctx.body = {
      transactionHash,
      address: getAddress(address),
      asset,
      amount: amount.toString(),
      amountRaw: units.toString(),
      chainId: deps.devnet.chainId,
    };
  });
  return router;
}
