import { endpointLabel } from '../../../shared/mask-userinfo.ts';
/**
 * A Solana JSON-RPC client for the follower: calls made in the same turn of the event loop go in
 * one HTTP request (a JSON-RPC batch, at most `batchSize` calls each), so polling many references
 * costs one round trip, not one per reference. Integers too large for a double (u64 lamports) are
 * read as bigints, as `@solana/kit` reads them.
 */
export type SolanaJsonRpc = {
  call<T>(method: string, params: unknown[]): Promise<T>;
  /** Calls made and HTTP requests sent so far (the polling cost). */
  counts(): { calls: number; requests: number };
};

/** The node answered with a JSON-RPC error (`code`), or not at all (`code` null). */
export class SolanaRpcError extends Error {
  override readonly name = 'SolanaRpcError';
  constructor(
    message: string,
    readonly code: number | null,
  ) {
    super(message);
  }
}

/** Calls sent in one HTTP request unless the client is given another `batchSize` (the follower reads transactions this many at a time). */
export const SOLANA_RPC_BATCH_SIZE = 100;

type Pending = { id: number; method: string; params: unknown[]; resolve(v: unknown): void; reject(e: unknown): void };

export function createSolanaJsonRpc(deps: { url: string; timeoutMs?: number; batchSize?: number }): SolanaJsonRpc {
  const batchSize = deps.batchSize ?? SOLANA_RPC_BATCH_SIZE;
  const timeoutMs = deps.timeoutMs ?? 10_000;
  let queue: Pending[] = [];
  let nextId = 1;
  let calls = 0;
  let requests = 0;

  async function send(batch: Pending[]): Promise<void> {
    requests += 1;
    try {
      const response = await fetch(deps.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(batch.map(({ id, method, params }) => ({ jsonrpc: '2.0', id, method, params }))),
        signal: AbortSignal.timeout(timeoutMs),
      });
      if (!response.ok) throw new SolanaRpcError(`${endpointLabel(deps.url)} answered HTTP ${response.status}`, null);
      const answers = parseJsonWithBigInts(await response.text());
      if (!Array.isArray(answers))
        throw new SolanaRpcError(`${endpointLabel(deps.url)} did not answer the batch with a list`, null);
      const byId = new Map<unknown, Record<string, unknown>>();
      for (const answer of answers as Record<string, unknown>[]) byId.set(Number(answer.id), answer);
      for (const call of batch) {
        const answer = byId.get(call.id);
        if (answer === undefined) call.reject(new SolanaRpcError(`no answer to ${call.method}`, null));
        else if (answer.error !== undefined) {
          const error = answer.error as { code?: unknown; message?: unknown };
          call.reject(
            new SolanaRpcError(
              `${call.method}: ${String(error.message ?? 'error')}`,
              typeof error.code === 'number' ? error.code : null,
            ),
          );
        } else call.resolve(answer.result);
      }
    } catch (error) {
      const failure =
        error instanceof SolanaRpcError
          ? error
          : new SolanaRpcError(
              `${endpointLabel(deps.url)}: ${error instanceof Error ? error.message : String(error)}`,
              null,
            );
      for (const call of batch) call.reject(failure);
    }
  }

  function flush(): void {
    const taken = queue;
    queue = [];
    for (let i = 0; i < taken.length; i += batchSize) void send(taken.slice(i, i + batchSize));
  }

  return {
    call<T>(method: string, params: unknown[]) {
      calls += 1;
      return new Promise<T>((resolve, reject) => {
        if (queue.length === 0) setImmediate(flush);
        queue.push({ id: nextId++, method, params, resolve: resolve as (v: unknown) => void, reject });
      });
    },
    counts: () => ({ calls, requests }),
  };
}

/** `JSON.parse`, with integer literals beyond 2^53 read as bigints (strings are left as they are). */
export function parseJsonWithBigInts(text: string): unknown {
  let out = '';
  let last = 0;
  const marked = new Set<string>();
  for (let i = 0; i < text.length; i++) {
    const c = text[i] ?? '';
    if (c === '"') {
      for (i++; i < text.length && text[i] !== '"'; i++) if (text[i] === '\\') i++;
      continue;
    }
    if ((c >= '0' && c <= '9') || c === '-') {
      let j = i + 1;
      while (j < text.length && /[0-9.eE+-]/.test(text[j] as string)) j++;
      const literal = text.slice(i, j);
      if (/^-?[0-9]{16,}$/.test(literal) && !Number.isSafeInteger(Number(literal))) {
        out += `${text.slice(last, i)}"\\u0000${literal}"`;
        last = j;
        marked.add(literal);
      }
      i = j - 1;
    }
  }
  const rewritten = out + text.slice(last);
  return JSON.parse(rewritten, (_key, value: unknown) =>
    typeof value === 'string' && value.startsWith('\u0000') && marked.has(value.slice(1))
      ? BigInt(value.slice(1))
      : value,
  );
}
