import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { LocalChainFamily } from '../../../app/config.ts';
import { createFileCheckpointStore } from '../follower/file-checkpoint-store.ts';
import type { Log } from '../../../shared/logger.ts';
import { localChainWarning, startFailed } from '../../local-chain-warning.ts';
import { startAnvilNode, freeLoopbackPort, type AnvilNode } from './anvil-node.ts';
import { parseDevnetInfo, writeDevnetInfo, type DevnetInfo } from './devnet-info.ts';
import { HardhatNodeStartError } from './errors.ts';
import type { HardhatNode } from './hardhat-node.ts';
import { createJsonRpc } from './json-rpc.ts';
import { defaultDevnetPort, deployDevnet, devnetChainId } from './start-devnet.ts';

/** The embedded chain's files inside the data dir. */
export const LOCAL_CHAIN_DIR = 'local-chain';
/**
 * Which local chain: its folder in the data dir, chain id, preferred port, the follower checkpoint
 * that reads it and the name its log lines go under. The EVM one unless given; the local Tron's
 * anvil is the other (src/chain-ingest/tron/devnet/embedded-tron.ts).
 */
export type LocalChainKind = {
  dir: string;
  chainId: number;
  /** 0: a free port, chosen by the system. */
  port: number;
  /** The follower's checkpoint key (its network name). */
  checkpoint: string;
  label: string;
  /** Which WEIR_LOCAL_CHAIN family it is and what test keys lack without it: its warning names them. */
  family: Exclude<LocalChainFamily, 'solana'>;
  name: string;
  /** anvil's `zeroFees`. */
  zeroFees?: boolean;
  /** Deploys its contracts on a new chain (the EVM devnet's unless given). */
  deploy?: (node: Pick<HardhatNode, 'rpcUrl' | 'wsUrl' | 'chainId'>) => Promise<DevnetInfo>;
  /** What a new chain gets, as its first start logs it ("deployed …"). */
  deploys: string;
};

/** The local EVM chain: `devnet` (31337) on 8545 when free, in DATA_DIR/local-chain. */
export const LOCAL_EVM_CHAIN: LocalChainKind = {
  dir: LOCAL_CHAIN_DIR,
  chainId: devnetChainId,
  port: defaultDevnetPort,
  checkpoint: 'devnet',
  label: 'local chain',
  family: 'evm',
  name: 'local chain',
  deploys: 'the forwarder factory and test USDC, USDT and DAI',
};

/** A local chain's line with its `event` (the family is added). */
type LocalChainLog = (line: string, fields: { event: string; [field: string]: unknown }) => void;

/** Seconds between anvil's state writes while running: a kill -9 of anvil loses at most about this much. */
const STATE_INTERVAL_SECONDS = 1;

export type LocalChain = {
  info: DevnetInfo;
  /** Stops anvil with SIGTERM: it writes the chain's state to the data dir first. */
  stop(): Promise<void>;
  /** SIGKILL at once (tests of a crashed chain): blocks since the last state write are lost. */
  kill(): void;
};

export type StartLocalChainOptions = {
  dataDir: string;
  log: Log;
  /** Port to listen on at 127.0.0.1: the kind's when free, else one the OS picks. */
  port?: number;
  /** {@link LOCAL_EVM_CHAIN} unless given. */
  kind?: LocalChainKind;
};

/**
 * The local EVM chain `weir serve` runs in its test environment: anvil (chain id 31337, automine,
 * 127.0.0.1 only) whose state lives in DATA_DIR/local-chain/state.json, so balances, contracts and
 * blocks (numbers and hashes) are the same after a restart. The forwarder factory and test
 * USDC/USDT/DAI are deployed and the payers funded once, on a fresh data dir (or when the state is
 * gone). An anvil left running by a Weir killed with -9 is stopped first (it writes its state then).
 * If the chain lost blocks Weir's follower had read (anvil itself crashed between state writes),
 * empty blocks are mined up to the follower's checkpoint, so the follower reads blocks that do not
 * link to the ones it knows and reports the lost ones as a reorg instead of waiting for the chain to
 * grow past its checkpoint while new payments land below it.
 */
export async function startLocalChain(options: StartLocalChainOptions): Promise<LocalChain> {
  const { dataDir } = options;
  const kind = options.kind ?? LOCAL_EVM_CHAIN;
  // Each line names its family, so an operator can filter one local chain's lines (and its `event`).
  const log: LocalChainLog = (line, fields) =>
    options.log(`[${kind.label}] ${line}`, { family: kind.family, ...fields });
  const dir = join(dataDir, kind.dir);
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const pidFile = join(dir, 'anvil.pid');
  const stateFile = join(dir, 'state.json');
  const infoFile = join(dir, 'devnet.json');
  await stopLeftOver(pidFile, stateFile, log);

  const on = async (port: number) =>
    startAnvilNode({
      chainId: kind.chainId,
      zeroFees: kind.zeroFees,
      port,
      stateFile,
      stateIntervalSeconds: STATE_INTERVAL_SECONDS,
    });
  // The preferred port can be taken between the check and anvil's bind (another Weir starting): then any free one.
  const start = async () => {
    try {
      return await on(await freeLoopbackPort(options.port ?? kind.port));
    } catch (error) {
      if (!(error instanceof HardhatNodeStartError && error.retryable)) throw error;
      return on(await freeLoopbackPort(0));
    }
  };
  let node: AnvilNode;
  try {
    node = await start();
  } catch (error) {
    // A state file anvil cannot read (torn by a crash while writing it): keep it aside, start a new chain.
    if (!(error instanceof HardhatNodeStartError && /failed to parse/i.test(error.log))) throw error;
    const aside = `${stateFile}.unreadable-${new Date().toISOString().replace(/[:.]/g, '-')}`;
    await rename(stateFile, aside);
    log(`anvil cannot read its state file (moved to ${aside}): starting a new chain`, {
      event: 'anvil.state_unreadable',
      level: 'warn',
      movedTo: aside,
    });
    node = await start();
  }
  try {
    await writeFile(pidFile, `${node.pid}\n`, { mode: 0o600 });
    const rpc = createJsonRpc(node.rpcUrl);
    const known = await previousInfo(infoFile);
    let info: DevnetInfo;
    if (known !== null && (await deployed(rpc, known))) {
      info = { ...known, rpcUrl: node.rpcUrl, wsUrl: node.wsUrl, startedAt: new Date().toISOString() };
    } else {
      info = await (kind.deploy ?? deployDevnet)(node);
      log(`deployed ${kind.deploys}; funded ${info.accounts.filter((a) => a.role === 'payer').length} payer accounts`, {
        event: 'local_chain.deployed',
        chainId: kind.chainId,
      });
    }
    await writeDevnetInfo(infoFile, info);
    await catchUpWithFollower(rpc, dataDir, kind, log);
    log(`anvil on ${node.rpcUrl} (chain id ${kind.chainId}, test environment only; state in ${stateFile})`, {
      event: 'anvil.started',
      // Not `pid`: every line's pid is Weir's own.
      anvilPid: node.pid,
      rpcUrl: node.rpcUrl,
      chainId: kind.chainId,
      stateFile,
    });
    return { info, stop: () => stopNode(node, pidFile), kill: node.kill };
  } catch (error) {
    await stopNode(node, pidFile);
    throw error;
  }
}

/**
 * {@link startLocalChain}, or null when it cannot start (no anvil build for this platform, say):
 * the local chain is a convenience of the test environment, so Weir goes on without it and says why.
 */
export async function startLocalChainOrWarn(options: StartLocalChainOptions): Promise<LocalChain | null> {
  try {
    return await startLocalChain(options);
  } catch (error) {
    const { family, label, name } = options.kind ?? LOCAL_EVM_CHAIN;
    options.log(localChainWarning(family, label, name, error), startFailed(family));
    return null;
  }
}

async function stopNode(node: AnvilNode, pidFile: string): Promise<void> {
  await node.stop();
  await rm(pidFile, { force: true });
}

async function previousInfo(infoFile: string): Promise<DevnetInfo | null> {
  try {
    return parseDevnetInfo(JSON.parse(await readFile(infoFile, 'utf8')), infoFile);
  } catch {
    return null;
  }
}

/** Every contract of `info` has code on the chain: the state was loaded, nothing to deploy. */
async function deployed(rpc: ReturnType<typeof createJsonRpc>, info: DevnetInfo): Promise<boolean> {
  for (const address of Object.values(info.contracts)) {
    const code = await rpc('eth_getCode', [address, 'latest']);
    if (typeof code !== 'string' || code === '0x') return false;
  }
  return true;
}

/** An anvil of this data dir still running (its Weir was killed with -9): SIGTERM makes it write its state and go. */
async function stopLeftOver(pidFile: string, stateFile: string, log: LocalChainLog): Promise<void> {
  let pid: number;
  try {
    pid = Number((await readFile(pidFile, 'utf8')).trim());
  } catch {
    return;
  }
  if (!Number.isSafeInteger(pid) || pid <= 0 || !alive(pid)) return;
  // Only a process that is this data dir's anvil: a pid can be reused by anything else.
  let commandLine: string;
  try {
    commandLine = (await readFile(`/proc/${pid}/cmdline`, 'utf8')).split('\0').join(' ');
  } catch {
    return;
  }
  if (!commandLine.includes('anvil') || !commandLine.includes(stateFile)) return;
  log(`stopping the anvil (pid ${pid}) a previous weir serve left running; it writes its state first`, {
    event: 'anvil.left_over_stopped',
    anvilPid: pid,
  });
  process.kill(pid, 'SIGTERM');
  for (let waited = 0; waited < 10_000 && alive(pid); waited += 50) await new Promise((r) => setTimeout(r, 50));
  if (alive(pid)) process.kill(pid, 'SIGKILL');
  for (let waited = 0; waited < 2_000 && alive(pid); waited += 50) await new Promise((r) => setTimeout(r, 50));
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Mines empty blocks up to the follower's checkpoint when the chain is shorter than what the follower read. */
async function catchUpWithFollower(
  rpc: ReturnType<typeof createJsonRpc>,
  dataDir: string,
  kind: LocalChainKind,
  log: LocalChainLog,
): Promise<void> {
  const checkpoint = await createFileCheckpointStore(join(dataDir, 'ingest'))
    .get(kind.checkpoint)
    .catch(() => undefined);
  if (checkpoint === undefined || checkpoint.chainId !== kind.chainId) return;
  const readUpTo = Math.max(checkpoint.nextBlock - 1, ...checkpoint.window.map((block) => block.number));
  const head = Number.parseInt(String(await rpc('eth_blockNumber')), 16);
  if (head > readUpTo) return;
  const known = checkpoint.window.find((block) => block.number === head);
  const block = (await rpc('eth_getBlockByNumber', [`0x${head.toString(16)}`, false])) as { hash?: string } | null;
  if (head === readUpTo && (known === undefined || known.hash === block?.hash)) return;
  const missing = readUpTo + 1 - head;
  await rpc('anvil_mine', [`0x${missing.toString(16)}`]);
  log(
    `the chain is at block ${head} but Weir had read up to block ${readUpTo} (anvil stopped before writing its state): mined ${missing} empty blocks so the follower reports the lost blocks as a reorg`,
    { event: 'local_chain.blocks_mined', level: 'warn', head, readUpTo, mined: missing },
  );
}
