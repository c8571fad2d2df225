import { endpointLabel } from '../../../shared/mask-userinfo.ts';

/**
 * Errors of the EVM follower. Each says what happened and what to do about it. Errors met while
 * following (RPC, reorg, bus) never stop a follower: it logs them, keeps the last one in
 * `status().lastError` and retries with backoff. Only `start()` throws (bad configuration, an
 * unreadable or foreign checkpoint).
 */

/** The follower's configuration is unusable; `field` names the offending part. */
export class EvmFollowerConfigError extends Error {
  override readonly name = 'EvmFollowerConfigError';
  constructor(
    readonly network: string,
    readonly field: string,
    message: string,
  ) {
    super(`evm follower for network ${JSON.stringify(network)}: ${field}: ${message}`);
  }
}

/** `start()` was called on a follower that is running or was stopped. */
export class EvmFollowerStateError extends Error {
  override readonly name = 'EvmFollowerStateError';
  constructor(
    readonly network: string,
    message: string,
  ) {
    super(`evm follower for network ${JSON.stringify(network)}: ${message}`);
  }
}

/** A checkpoint could not be read or written, or its content is not a follower checkpoint. */
export class CheckpointStoreError extends Error {
  override readonly name = 'CheckpointStoreError';
  constructor(
    readonly network: string,
    /** File path (or other location) of the checkpoint. */
    readonly location: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(`checkpoint of network ${JSON.stringify(network)} at ${location}: ${message}`, options);
  }
}

/** The stored checkpoint was written for another chain: following on would mix two chains' blocks. */
export class CheckpointMismatchError extends Error {
  override readonly name = 'CheckpointMismatchError';
  constructor(
    readonly network: string,
    readonly expectedChainId: number,
    readonly storedChainId: number,
  ) {
    super(
      `the checkpoint of network ${JSON.stringify(network)} was written for chain id ${storedChainId}, but the follower is configured for chain id ${expectedChainId}: ` +
        'fix the network configuration, or delete the checkpoint to start again from startBlock',
    );
  }
}

/**
 * The node at the RPC endpoint(s) answers with a chain id other than the configured one. Named by
 * scheme and host only: the message reaches logs and the follower's lastError, and the URL's path
 * or query may hold an API key.
 */
export class WrongChainError extends Error {
  override readonly name = 'WrongChainError';
  /** The endpoint by scheme and host. */
  readonly endpoint: string;
  constructor(
    readonly network: string,
    url: string,
    readonly expectedChainId: number,
    readonly actualChainId: number,
  ) {
    const endpoint = endpointLabel(url);
    super(
      `${endpoint} serves chain id ${actualChainId}, but network ${JSON.stringify(network)} is chain id ${expectedChainId}: ` +
        'point the network at an endpoint of the right chain',
    );
    this.endpoint = endpoint;
  }
}

/** How one endpoint failed a request. */
export type EndpointFailure = {
  url: string;
  /** `unreachable`: no HTTP answer (refused, DNS, reset, HTTP error status); `timeout`; `rejected`: the node answered with a JSON-RPC error. */
  kind: 'unreachable' | 'timeout' | 'rejected';
  message: string;
};

/**
 * Every configured HTTP endpoint failed one JSON-RPC request. The message names each endpoint by
 * scheme and host only: it reaches logs, follower status and a recovery's 502, and providers put
 * their API key in the URL's path or query.
 */
export class RpcEndpointsError extends Error {
  override readonly name = 'RpcEndpointsError';
  constructor(
    readonly network: string,
    readonly method: string,
    readonly failures: readonly EndpointFailure[],
  ) {
    super(
      `${method} failed on every endpoint of network ${JSON.stringify(network)}: ${describeFailures(failures)}` +
        '; the follower retries with backoff. If this persists, check the endpoints or add another one.',
    );
  }

  /** What each endpoint did, named by scheme and host. */
  get described(): string {
    return describeFailures(this.failures);
  }

  /** True when at least one node answered with a JSON-RPC error or timed out: the request itself may be too large. */
  get refusedOrTimedOut(): boolean {
    return this.failures.some((failure) => failure.kind !== 'unreachable');
  }
}

const describeFailures = (failures: readonly EndpointFailure[]): string =>
  failures.map((failure) => `${endpointLabel(failure.url)} (${failure.kind}: ${failure.message})`).join('; ');

/** A node answered with data that is not what the JSON-RPC spec promises (missing block fields, bad hex, ...). */
export class MalformedRpcResponseError extends Error {
  override readonly name = 'MalformedRpcResponseError';
  constructor(
    readonly network: string,
    readonly method: string,
    message: string,
  ) {
    super(
      `${method} on network ${JSON.stringify(network)} returned malformed data: ${message}; the follower retries. If it persists, the endpoint is not a conforming EVM node.`,
    );
  }
}

/** eth_getLogs was refused even for a single block: the Transfer logs of that block cannot be read. */
export class LogRangeError extends Error {
  override readonly name = 'LogRangeError';
  constructor(
    readonly network: string,
    readonly blockNumber: bigint,
    options?: { cause?: unknown },
  ) {
    super(
      `eth_getLogs for the token Transfer logs of block ${blockNumber} on network ${JSON.stringify(network)} failed even for a one-block range: ` +
        'the follower retries with backoff; if it persists, use an endpoint without a log-result limit for this network',
      options,
    );
  }
}

/**
 * The chain changed while the follower read a range (a block's parent or a log's block hash did
 * not match the blocks read alongside it). Nothing was published for the inconsistent part; the
 * follower reads it again.
 */
export class ChainChangedWhileReadingError extends Error {
  override readonly name = 'ChainChangedWhileReadingError';
  constructor(
    readonly network: string,
    readonly blockNumber: bigint,
    message: string,
  ) {
    super(
      `network ${JSON.stringify(network)} changed while reading block ${blockNumber}: ${message}; reading it again`,
    );
  }
}

/**
 * A reorg went deeper than the follower's window: even the oldest kept block (already final) is
 * no longer canonical. Finality was published for blocks that were later replaced; the network's
 * `confirmations` is too low. The follower reports the whole window as removed and follows the new
 * chain from the oldest kept height.
 */
export class DeepReorgError extends Error {
  override readonly name = 'DeepReorgError';
  constructor(
    readonly network: string,
    readonly oldestKeptBlock: bigint,
    readonly confirmations: number,
  ) {
    super(
      `network ${JSON.stringify(network)} reorganised below block ${oldestKeptBlock}, which had ${confirmations} confirmations and was reported final: ` +
        "raise the network's confirmations; payments confirmed from the replaced blocks must be reviewed by hand",
    );
  }
}
