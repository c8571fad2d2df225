import {
  BaseError,
  createPublicClient,
  http,
  HttpRequestError,
  LimitExceededRpcError,
  RpcError,
  rpcSchema,
  type Hash,
} from 'viem';
import { endpointLabel } from '../../shared/mask-userinfo.ts';
import { RpcEndpointsError, type EndpointFailure } from './follower/errors.ts';
import { rpcValueReader, type RpcValueReader } from './follower/rpc-values.ts';

/**
 * Native coin a contract moved inside a transaction (an internal call: a Safe, an ERC-4337 smart
 * account, an exchange's batch payout), which neither the transaction's value nor its Transfer
 * logs show. Only a node's call trace (`debug_traceTransaction` with geth's `callTracer`, served by
 * geth, reth, erigon and anvil) does, so recovery by hash asks for it. The follower reads no trace:
 * the balance reconciler (reconciler.ts) credits such coin from the deposit's balance instead.
 */
export type InternalValueCall = { logIndex: number; from: string; to: string; value: bigint };

/**
 * The transfer index of the internal value move with `ordinal` (see `internalValueCalls`; the
 * transaction's own call is 0): -1 - ordinal. The top-level call's value is the native transfer the
 * follower already keys -1, so the same move gets the same id however it is found; every internal
 * move gets -2 or below, a range no follower ever published (token logs are >= 0, native -1), so its
 * transfer id (network:hash:index) never collides with a token transfer's of the same transaction.
 */
export const internalTransferIndex = (ordinal: number): number => -1 - ordinal;

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
        failures.map((f) => `${endpointLabel(f.url)} (${f.message})`).join('; '),
    );
  }

  /** What the nodes answered, without their URLs (which may hold API keys): safe to show a merchant. */
  get answers(): string {
    return [...new Set(this.failures.map((f) => f.message))].join('; ');
  }
}

/** Frames that can move native coin to another account (DELEGATECALL and STATICCALL move none). */
const VALUE_FRAMES = new Set(['CALL', 'CALLCODE', 'CREATE', 'CREATE2']);
/** A contract's SELFDESTRUCT: the tracer shows it as a frame whose `to` receives the contract's whole balance. */
const SELFDESTRUCT = 'SELFDESTRUCT';
/** 0x0000…ffff: precompiles and chains' system contracts live there; no key or CREATE yields such an address. */
const PRECOMPILE_RANGE = /^0x0{36}[0-9a-f]{4}$/i;

/**
 * The frames of a transaction that moved native coin to some address: CALLs (not DELEGATECALL or
 * STATICCALL, which move none, nor CALLCODE, which pays the caller itself) and SELFDESTRUCTs (which
 * send the contract's balance to their `to`; after Cancun too, only the deletion of the code
 * changed) with a value, that did not revert and whose callers did not either (a reverted frame
 * undoes everything under it, and the tracer marks only that frame). The transaction's own call is
 * left out: its value is the top-level native transfer.
 *
 * A call's index must not depend on the node: recovery falls through to another endpoint of the
 * network, and a transfer id that differed between two of them would be credited twice. Nodes do
 * not list the same frames: geth and erigon show precompile calls (a Safe's ecrecover), revm-based
 * tracers (reth, anvil) may not, and a DELEGATECALL may or may not show its caller's value. So
 * only frames every node shows alike are numbered: value-moving frames (CALL, CALLCODE, CREATE,
 * CREATE2) with a value, not to a precompile, in depth-first order, reverted ones too, so that the
 * numbering is the same whatever ends up credited. SELFDESTRUCTs with a value are numbered after
 * all of those, in depth-first order among themselves: a tracer that does not list them (older
 * ones did not) numbers the calls alike, and so did Weir before it credited them.
 */
export function internalValueCalls(root: unknown, read: RpcValueReader): InternalValueCall[] {
  type Numbered = { frame: CallFrame; where: string; amount: bigint; failed: boolean };
  const calls: Numbered[] = [];
  const destructs: Numbered[] = [];
  const visit = (value: unknown, where: string, undone: boolean, top: boolean): void => {
    const frame: CallFrame = read.record(value, where);
    const failed = undone || (frame.error !== undefined && frame.error !== null);
    const amount =
      frame.value === undefined || frame.value === null ? 0n : read.quantity(frame.value, `${where} value`);
    const kind = typeof frame.type === 'string' ? frame.type.toUpperCase() : undefined;
    const numbered =
      !top &&
      amount > 0n &&
      kind !== undefined &&
      (VALUE_FRAMES.has(kind) || kind === SELFDESTRUCT) &&
      !(typeof frame.to === 'string' && PRECOMPILE_RANGE.test(frame.to));
    if (numbered) (kind === SELFDESTRUCT ? destructs : calls).push({ frame, where, amount, failed });
    if (frame.calls === undefined || frame.calls === null) return;
    if (!Array.isArray(frame.calls)) read.fail(`${where} calls is not an array`);
    for (const [index, call] of (frame.calls as unknown[]).entries())
      visit(call, `${where}.calls[${index}]`, failed, false);
  };
  visit(root, 'trace', false, true);
  return [...calls, ...destructs].flatMap(({ frame, where, amount, failed }, index) => {
    const kind = (frame.type as string).toUpperCase();
    if (failed || (kind !== 'CALL' && kind !== SELFDESTRUCT)) return [];
    const move = {
      logIndex: internalTransferIndex(index + 1),
      from: read.address(frame.from, `${where} from`),
      to: read.address(frame.to, `${where} to`),
      value: amount,
    };
    // A contract destroyed in favour of itself moves nothing (its balance stays, or is burnt).
    return kind === SELFDESTRUCT && move.to.toLowerCase() === move.from.toLowerCase() ? [] : [move];
  });
}

/**
 * `calls` with the index of an internal transfer a session already records from the same
 * transaction to the same address for the same amount (`recorded`, its payments of indexes <= -2,
 * addresses in the rail's form, `address` mapping a call's to it). A second check beside the
 * node-independent numbering: a move credited under another index (another node's trace, an older
 * Weir's numbering) keeps its id, so the matcher counts it once. Each recorded payment is claimed
 * once, its own index first, so a payout that pays the same amount twice is still credited twice.
 *
 * `taken` is every index any session (of any tenant) records for the transaction. A call that
 * claims nothing keeps its own index only when no other move holds it, recorded or handed out
 * here: under an older numbering that index may be another address's payment, and two moves with
 * one id would be one message to the bus (the second dropped) and one payment document (overwritten).
 * Such a call gets a fresh index below every one in use; recovered again, it claims that one.
 */
export function keepRecordedIndexes(
  calls: readonly InternalValueCall[],
  recorded: readonly { logIndex: number; to: string; value: bigint }[],
  taken: readonly number[],
  address: (nodeAddress: string) => string = (a) => a,
): InternalValueCall[] {
  const unclaimed = recorded.filter((r) => r.logIndex < internalTransferIndex(0));
  const take = (found: (r: (typeof unclaimed)[number]) => boolean): number | undefined => {
    const at = unclaimed.findIndex(found);
    return at < 0 ? undefined : unclaimed.splice(at, 1)[0]!.logIndex;
  };
  const same = (call: InternalValueCall) => (r: (typeof unclaimed)[number]) =>
    r.to === address(call.to) && r.value === call.value;
  // Calls recorded under their own index claim it first, so that no lookalike takes it.
  const own = calls.map((call) => take((r) => same(call)(r) && r.logIndex === call.logIndex));
  const claimed = calls.map((call, index) => own[index] ?? take(same(call)));
  const used = new Set([...taken, ...recorded.map((r) => r.logIndex), ...claimed.flatMap((i) => i ?? [])]);
  let fresh = Math.min(internalTransferIndex(0), ...used, ...calls.map((c) => c.logIndex));
  return calls.map((call, index) => {
    let logIndex = claimed[index];
    if (logIndex === undefined) {
      logIndex = used.has(call.logIndex) ? --fresh : call.logIndex;
      used.add(logIndex);
    }
    return { ...call, logIndex };
  });
}

/** HTTP statuses of an endpoint that refuses the method itself (a provider's plan or proxy without debug_*). */
const REFUSING_STATUSES = new Set([403, 405, 501]);
/** Client errors that are no refusal: a timeout and a rate limit pass. */
const RETRYABLE_STATUSES = new Set([408, 429]);
/** What a gateway says, in the body of a 4xx that is not a JSON-RPC error, when it does not offer a method. */
const METHOD_REFUSED = /method not found|not supported|unsupported|not available|does not exist|disabled|not allowed/i;

/**
 * Why the endpoint cannot trace, when its answer says so: a JSON-RPC error (no debug API,
 * -32601/-32004; the callTracer not offered, hardhat; the transaction's state pruned on a full,
 * not archive, node), or an HTTP refusal of the method (403/405/501, or a 4xx whose body says it is
 * not offered). A rate limit is not that, nor is another HTTP failure: another try may be served.
 */
function cannotTrace(error: unknown): string | undefined {
  if (!(error instanceof BaseError)) return undefined;
  const refusal = error.walk((e) => e instanceof HttpRequestError);
  if (refusal instanceof HttpRequestError) {
    const said = refusal.details.split('\n')[0]!.slice(0, 160);
    const { status } = refusal;
    // A body is read only from a client error: a gateway's 429 or 5xx says "not available" of
    // itself (overloaded, upstream down), and another try may be served.
    const clientError = status !== undefined && status >= 400 && status < 500 && !RETRYABLE_STATUSES.has(status);
    const refused =
      (status !== undefined && REFUSING_STATUSES.has(status)) || (clientError && METHOD_REFUSED.test(said));
    return refused ? `HTTP ${status ?? 'error'}${said ? `: ${said}` : ''}` : undefined;
  }
  const cause = error.walk((e) => e instanceof RpcError);
  return cause instanceof RpcError && !(cause instanceof LimitExceededRpcError)
    ? cause.details || cause.shortMessage
    : undefined;
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
      if (refused !== undefined) missing.push({ url, kind: 'rejected', message: refused });
      else if (error instanceof BaseError) failed.push({ url, kind: 'unreachable', message: error.shortMessage });
      else throw error;
    }
  }
  if (failed.length === 0) throw new TraceUnavailableError(network, missing);
  throw new RpcEndpointsError(network, TRACE, [...failed, ...missing]);
}
