import { BaseError, createPublicClient, http, LimitExceededRpcError, RpcError, rpcSchema, type Hash } from 'viem';
import { RpcEndpointsError, type EndpointFailure } from './follower/errors.ts';
import { rpcValueReader, type RpcValueReader } from './follower/rpc-values.ts';

/**
 * Native coin a contract moved inside a transaction (an internal call: a Safe, an ERC-4337 smart
 * account, an exchange's batch payout), which neither the transaction's value nor its Transfer
 * logs show. Only a node's call trace (`debug_traceTransaction` with geth's `callTracer`, served by
 * geth, reth, erigon and anvil) does, so recovery by hash asks for it; the follower never does.
 */
export type InternalValueCall = { logIndex: number; from: string; to: string; value: bigint };

/**
 * The transfer index of the call at `position` in the trace's depth-first order (the transaction's
 * own call is 0): -1 - position. The top-level call's value is the native transfer the follower
 * already keys -1, so the same move gets the same id however it is found; every internal call gets
 * -2 or below, a range no follower ever published (token logs are >= 0, native -1), so its
 * transfer id (network:hash:index) never collides with a token transfer's of the same transaction.
 */
export const internalTransferIndex = (position: number): number => -1 - position;

/** A frame of the callTracer's answer, as far as recovery reads it. */
type CallFrame = { type?: unknown; from?: unknown; to?: unknown; value?: unknown; error?: unknown; calls?: unknown };

type TraceSchema = [
  {
    Method: 'debug_traceTransaction';
    Parameters: [transactionHash: Hash, options: { tracer: 'callTracer' }];
    ReturnType: CallFrame;
  },
];

const TRACE = 'debug_traceTransaction';

/** No endpoint of the network traces the transaction: its internal transfers cannot be seen there. */
export class TraceUnavailableError extends Error {
  override readonly name = 'TraceUnavailableError';
  constructor(
    readonly network: string,
    readonly failures: readonly EndpointFailure[],
  ) {
    super(
      `no RPC endpoint of ${network} serves ${TRACE} with the callTracer: ` +
        failures.map((f) => `${f.url} (${f.message})`).join('; '),
    );
  }

  /** What the nodes answered, without their URLs (which may hold API keys): safe to show a merchant. */
  get answers(): string {
    return [...new Set(this.failures.map((f) => f.message))].join('; ');
  }
}

/**
 * The calls of a transaction that moved native coin to some address: CALLs (not DELEGATECALL or
 * STATICCALL, which move none, nor CALLCODE, which pays the caller itself) with a value, that did
 * not revert and whose callers did not either (a reverted frame undoes everything under it). The
 * transaction's own call is left out: its value is the top-level native transfer.
 */
export function internalValueCalls(root: unknown, read: RpcValueReader): InternalValueCall[] {
  const found: InternalValueCall[] = [];
  let position = 0;
  const visit = (value: unknown, where: string, undone: boolean): void => {
    const frame: CallFrame = read.record(value, where);
    const here = position++;
    const failed = undone || (frame.error !== undefined && frame.error !== null);
    const amount =
      frame.value === undefined || frame.value === null ? 0n : read.quantity(frame.value, `${where} value`);
    if (here > 0 && !failed && frame.type === 'CALL' && amount > 0n)
      found.push({
        logIndex: internalTransferIndex(here),
        from: read.address(frame.from, `${where} from`),
        to: read.address(frame.to, `${where} to`),
        value: amount,
      });
    if (frame.calls === undefined || frame.calls === null) return;
    if (!Array.isArray(frame.calls)) read.fail(`${where} calls is not an array`);
    for (const [index, call] of (frame.calls as unknown[]).entries()) visit(call, `${where}.calls[${index}]`, failed);
  };
  visit(root, 'trace', false);
  return found;
}

/**
 * The endpoint answered the trace with a JSON-RPC error: no debug API (-32601/-32004), the
 * callTracer not offered (hardhat), or the transaction's state pruned (a full, not archive, node).
 * A rate limit is not that: another try may be served.
 */
function cannotTrace(error: unknown): RpcError | undefined {
  if (!(error instanceof BaseError)) return undefined;
  const cause = error.walk((e) => e instanceof RpcError);
  return cause instanceof RpcError && !(cause instanceof LimitExceededRpcError) ? cause : undefined;
}

/**
 * The native coin moved by internal calls of `transactionHash`, read from the first endpoint that
 * serves its call trace. Throws TraceUnavailableError when every endpoint refuses to trace it,
 * RpcEndpointsError when some did not answer (they may serve it on another try) and
 * MalformedRpcResponseError for an answer that is not a call trace.
 */
export async function readInternalValueCalls(parameters: {
  network: string;
  urls: readonly string[];
  transactionHash: string;
  timeoutMs: number;
}): Promise<InternalValueCall[]> {
  const { network, transactionHash, timeoutMs } = parameters;
  const missing: EndpointFailure[] = [];
  const failed: EndpointFailure[] = [];
  for (const url of parameters.urls) {
    const client = createPublicClient({
      transport: http(url, { retryCount: 0, timeout: timeoutMs }),
      rpcSchema: rpcSchema<TraceSchema>(),
    });
    try {
      const trace = await client.request({
        method: TRACE,
        params: [transactionHash as Hash, { tracer: 'callTracer' }],
      });
      return internalValueCalls(trace, rpcValueReader(network, TRACE));
    } catch (error) {
      const refused = cannotTrace(error);
      if (refused) missing.push({ url, kind: 'rejected', message: refused.details || refused.shortMessage });
      else if (error instanceof BaseError) failed.push({ url, kind: 'unreachable', message: error.shortMessage });
      else throw error;
    }
  }
  if (failed.length === 0) throw new TraceUnavailableError(network, missing);
  throw new RpcEndpointsError(network, TRACE, [...failed, ...missing]);
}
