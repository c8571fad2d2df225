import type { Log } from '../../../shared/logger.ts';
import { localChainWarning, startFailed } from '../../local-chain-warning.ts';
import { startLocalSolana, type LocalSolanaServer } from './rpc-server.ts';

export type LocalSolanaCluster = LocalSolanaServer & {
  /** What `weir devnet` prints and Weir offers: RPC URL, test mints and faucet. */
  info: { rpcUrl: string; wsUrl: string; mints: { usdc: string; usdt: string }; faucet: string };
};

/**
 * The local Solana for development (`weir devnet`, `npm start`'s embedded test chains): the JSON-RPC
 * server over litesvm, whose transactions arrive `confirmed` and are `finalized` every
 * `finalizeEveryMs` (2 s unless given), as a cluster roots blocks, so payments complete by themselves.
 * Its state lives in memory: a restart begins a fresh cluster (same mints and faucet).
 */
export async function startLocalSolanaCluster(
  options: { port?: number; finalizeEveryMs?: number } = {},
): Promise<LocalSolanaCluster> {
  const server = await startLocalSolana({ port: options.port ?? 0 });
  const timer = setInterval(() => server.ledger.finalize(), options.finalizeEveryMs ?? 2000);
  timer.unref();
  return {
    ...server,
    info: { rpcUrl: server.rpcUrl, wsUrl: server.wsUrl, mints: server.ledger.mints, faucet: server.ledger.faucet },
    async stop() {
      clearInterval(timer);
      await server.stop();
    },
  };
}

/** The local cluster for `weir serve`'s test chains (on any free port unless given), or null (logged) when it cannot start. */
export async function startLocalSolanaOrWarn(
  log: Log,
  options: { port?: number } = {},
): Promise<LocalSolanaCluster | null> {
  try {
    const cluster = await startLocalSolanaCluster(options);
    log(
      `[local solana] running on ${cluster.rpcUrl} (test USDC ${cluster.info.mints.usdc}, USDT ${cluster.info.mints.usdt})`,
      { event: 'local_chain.started', family: 'solana', rpcUrl: cluster.rpcUrl },
    );
    return cluster;
  } catch (error) {
    log(localChainWarning('solana', 'local solana', 'local Solana', error), startFailed('solana'));
    return null;
  }
}
