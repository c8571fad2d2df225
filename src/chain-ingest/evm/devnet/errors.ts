import { SettingError } from '../../../shared/setting-error.ts';
/** Why a hardhat node did not start. `address-in-use` is worth retrying on another port. */
export type HardhatNodeStartFailure =
  | 'hardhat-missing'
  | 'anvil-missing'
  | 'spawn-failed'
  | 'address-in-use'
  | 'exited'
  | 'timeout'
  | 'wrong-chain';

/** A hardhat node could not be started; `message` says what happened and what to do. */
export class HardhatNodeStartError extends Error {
  override readonly name = 'HardhatNodeStartError';
  constructor(
    readonly reason: HardhatNodeStartFailure,
    message: string,
    readonly log: string = '',
  ) {
    super(message);
  }
  /** True when another attempt (on another port) may succeed. */
  get retryable(): boolean {
    return this.reason === 'address-in-use';
  }
}

/** A devnet info document is missing, is not JSON, or does not have the expected shape. */
export class DevnetInfoError extends SettingError {
  override readonly name = 'DevnetInfoError';
  constructor(
    readonly source: string,
    readonly problems: readonly string[],
  ) {
    super(
      `devnet info ${source} is not usable: ${problems.join('; ')}. ` +
        'Start a devnet (`weir devnet`) and point to the file it writes, or fix the file by hand.',
    );
  }
}

/** The faucet could not fund an account. */
export class FaucetError extends Error {
  override readonly name = 'FaucetError';
  constructor(message: string) {
    super(message);
  }
}

/** The account to fund refused the coin sent (a contract with no payable receive): the request's doing, not the chain's. */
export class FaucetRefusedError extends FaucetError {}
