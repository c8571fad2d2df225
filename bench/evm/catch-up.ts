/**
 * How fast a fresh EVM follower catches up with a chain: a hardhat devnet is filled with
 * `--blocks` blocks (10,000) of `--per-block` USDC transfers each (10: 100,000 transfers), every
 * one to its own watched address; then a new follower (in-process bus, in-memory checkpoint,
 * startBlock 0) reads from block 0 to the head. Reports transfers/s, blocks/s, RPC calls by method
 * and HTTP requests (the follower's counters()), and checks that exactly one transfer message per
 * transfer was published.
 *
 *   node --import tsx bench/evm/catch-up.ts [--blocks 10000] [--per-block 10] [--senders 10] [--runs 3]
 *        [--max-log-range 1000] [--no-default-probe] [--stall-s 60] [--verbose] [--profile-dir DIR] [--json FILE] [--timeout-s 1800]
 *   (npm run bench:catch-up)
 *
 * Producing the chain: automine off; `--senders` accounts derived from hardhat's mnemonic
 * (indexes 10.., funded with ETH by hardhat, minted USDC by the deployer) sign every transfer
 * locally with viem (EIP-1559, nonces counted here, so no nonce round trips). Per block, one
 * JSON-RPC batch of `eth_sendRawTransaction`s then `evm_mine`; the next block's transactions are
 * signed while hardhat mines. Takes a few minutes; progress goes to stderr.
 *
 * The follower is given the HTTP endpoint only (no WebSocket: nothing new is mined while it
 * catches up, and heads come from eth_blockNumber). Each run is timed from `start()` to the moment
 * `status()` shows the head processed with no final owed. Several runs over the same chain, each
 * with a fresh follower, bus and checkpoint store, with `maxLogRange` = `--max-log-range`. Before
 * them, one run with the follower's default range (2000 blocks, as `startWeir` creates it), stopped
 * if it processes no block for `--stall-s`: at 10 transfers per block a 2000-block eth_getLogs
 * answer is about 12 MB, over viem's 10 MiB response limit, and the follower does not narrow the
 * range for that error (it does for JSON-RPC errors and timeouts). Prints a JSON summary and a Markdown table.
 *
 * Baseline, in the same run (issue 17): before each measured follower run, a bare viem loop reads
 * the same blocks 0..head from the same node with the same sizes (`eth_getLogs` of the three tokens'
 * logs over `--max-log-range` blocks, the first 50-block chunk sent with it, then
 * `eth_getBlockByNumber(n, true)` 50 to a JSON-RPC batch, as raw `client.request`s: JSON parsed,
 * nothing formatted) and does nothing with them.
 * The summary gives the follower's blocks/s as a share of the bare loop's (target ≥ 50%).
 * Not a test.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { Session } from 'node:inspector/promises';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { createPublicClient, encodeFunctionData, erc20Abi, http, type Address, type Hex } from 'viem';
import { mnemonicToAccount, type HDAccount } from 'viem/accounts';
import { createInProcessBus } from '../../src/bus/in-process-bus.ts';
import { testTokenAbi } from '../../src/chain-ingest/evm/contracts/abis.ts';
import { createEvmWriteClients } from '../../src/chain-ingest/evm/contracts/clients.ts';
import { devnetAccount } from '../../src/chain-ingest/evm/devnet/devnet-info.ts';
import { hardhatMnemonic } from '../../src/chain-ingest/evm/devnet/hardhat-accounts.ts';
import { startDevnet, type Devnet } from '../../src/chain-ingest/evm/devnet/start-devnet.ts';
import {
  createEvmFollower,
  createInMemoryCheckpointStore,
  type EvmFollowerCounters,
} from '../../src/chain-ingest/evm/follower/index.ts';
import { createWatchedAddresses } from '../../src/chain-ingest/watched-addresses.ts';
import {
  deadline,
  fmt,
  leftoverHardhatChildren,
  loadAverage1m,
  machineInfo,
  machineLoad,
  markdownTable,
  numberFlag,
  stringFlag,
} from './support/bench-env.ts';

const NETWORK = 'devnet';

type Settings = {
  blocks: number;
  perBlock: number;
  senders: number;
  runs: number;
  /** eth_getLogs range of the measured runs. */
  maxLogRange: number;
  /** Also run once (bounded) with the follower's default range, as Weir starts it. */
  probeDefault: boolean;
  /** A run that processes no block for this long is stopped and reported as stalled. */
  stallS: number;
  verbose: boolean;
  /** Write a CPU profile (.cpuprofile) of the measured runs only, to this directory. */
  profileDir: string | null;
  jsonOut: string | null;
  timeoutS: number;
};

function readSettings(argv: readonly string[]): Settings {
  return {
    blocks: numberFlag(argv, '--blocks', 10_000, 1, 100_000),
    perBlock: numberFlag(argv, '--per-block', 10, 1, 200),
    senders: numberFlag(argv, '--senders', 10, 1, 10),
    runs: numberFlag(argv, '--runs', 3, 1, 10),
    maxLogRange: numberFlag(argv, '--max-log-range', 1_000, 1, 1_000_000),
    probeDefault: !argv.includes('--no-default-probe'),
    stallS: numberFlag(argv, '--stall-s', 60, 5, 600),
    verbose: argv.includes('--verbose'),
    profileDir: stringFlag(argv, '--profile-dir') ?? null,
    jsonOut: stringFlag(argv, '--json') ?? null,
    timeoutS: numberFlag(argv, '--timeout-s', 1_800, 30, 7_200),
  };
}

type JsonRpcRequest = { method: string; params: unknown[] };

function createJsonRpc(url: string) {
  let id = 0;
  const post = async (body: unknown): Promise<unknown> => {
    const response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(60_000),
    });
    return response.json();
  };
  type Reply = { id: number; result?: unknown; error?: { message: string } };
  return {
    async call(method: string, params: unknown[] = []): Promise<unknown> {
      const reply = (await post({ jsonrpc: '2.0', id: ++id, method, params })) as Reply;
      if (reply.error !== undefined) throw new Error(`${method}: ${reply.error.message}`);
      return reply.result;
    },
    /** One HTTP request; results in request order (hardhat answers a batch in any order). */
    async batch(requests: readonly JsonRpcRequest[]): Promise<unknown[]> {
      const first = id + 1;
      const body = requests.map((request) => ({
        jsonrpc: '2.0',
        id: ++id,
        method: request.method,
        params: request.params,
      }));
      const replies = (await post(body)) as Reply[];
      const results: unknown[] = new Array(requests.length);
      for (const reply of replies) {
        if (reply.error !== undefined)
          throw new Error(`${requests[reply.id - first]?.method ?? 'batch'}: ${reply.error.message}`);
        results[reply.id - first] = reply.result;
      }
      return results;
    },
  };
}

/** CPU seconds (user + system, from /proc) of this process's child processes whose command line matches `pattern`. */
function childCpuSeconds(pattern: RegExp): number {
  try {
    const lines = execFileSync('ps', ['-o', 'pid=,args=', '--ppid', String(process.pid)], { encoding: 'utf8' }).split(
      '\n',
    );
    let ticks = 0;
    for (const line of lines.filter((entry) => pattern.test(entry))) {
      const pid = line.trim().split(/\s+/)[0];
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      // Fields after the command name (which is in parentheses): utime and stime are the 14th and 15th fields.
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      ticks += Number(fields[11]) + Number(fields[12]);
    }
    return ticks / 100;
  } catch {
    return Number.NaN;
  }
}

const TRANSFER_TOPIC: Hex = '0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef';

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

type BareRun = {
  run: number;
  seconds: number;
  blocks: number;
  logs: number;
  blocksPerSecond: number;
  httpRequests: number;
};

/**
 * The baseline: viem's public client (http transport, batching) reading blocks 0..`head` with their transactions and the
 * tokens' logs, as the follower does (one eth_getLogs per `logRange` blocks with the first chunk
 * beside it, then `batchSize` blocks per JSON-RPC batch), in a plain loop, keeping nothing.
 */
async function bareViemRun(parameters: {
  run: number;
  rpcUrl: string;
  tokens: readonly Address[];
  head: number;
  logRange: number;
  batchSize: number;
}): Promise<BareRun> {
  const { rpcUrl, tokens, head, logRange, batchSize } = parameters;
  let httpRequests = 0;
  const client = createPublicClient({
    transport: http(rpcUrl, {
      batch: { batchSize, wait: 0 },
      retryCount: 0,
      timeout: 60_000,
      onFetchRequest: () => {
        httpRequests += 1;
      },
    }),
  });
  const quantity = (value: number): Hex => `0x${value.toString(16)}`;
  // Raw requests (JSON parsed, nothing formatted): the floor the follower's own parsing sits on.
  const readChunk = (from: number, to: number) =>
    Promise.all(
      Array.from({ length: to - from + 1 }, (_, index) =>
        client.request({ method: 'eth_getBlockByNumber', params: [quantity(from + index), true] }),
      ),
    );
  let blocks = 0;
  let logs = 0;
  const started = performance.now();
  for (let rangeFrom = 0; rangeFrom <= head; rangeFrom += logRange) {
    const rangeTo = Math.min(head, rangeFrom + logRange - 1);
    for (let chunkFrom = rangeFrom; chunkFrom <= rangeTo; chunkFrom += batchSize) {
      const chunkTo = Math.min(rangeTo, chunkFrom + batchSize - 1);
      if (chunkFrom === rangeFrom) {
        const [found, read] = await Promise.all([
          client.request({
            method: 'eth_getLogs',
            params: [
              {
                address: [...tokens],
                topics: [TRANSFER_TOPIC],
                fromBlock: quantity(rangeFrom),
                toBlock: quantity(rangeTo),
              },
            ],
          }),
          readChunk(chunkFrom, chunkTo),
        ]);
        logs += found.length;
        blocks += read.length;
      } else {
        blocks += (await readChunk(chunkFrom, chunkTo)).length;
      }
    }
  }
  const seconds = (performance.now() - started) / 1000;
  return {
    run: parameters.run,
    seconds: +seconds.toFixed(2),
    blocks,
    logs,
    blocksPerSecond: Math.round(blocks / seconds),
    httpRequests,
  };
}

type RunResult = {
  /** 0: the bounded run with the follower's default eth_getLogs range. */
  run: number;
  maxLogRange: number | string;
  /** Why the run was stopped before reaching the head, or null. */
  stalled: string | null;
  processed: string | null;
  seconds: number;
  blocks: number;
  transfers: number;
  blocksPerSecond: number;
  transfersPerSecond: number;
  followerCpuSeconds: number;
  hardhatCpuSeconds: number;
  counters: EvmFollowerCounters;
  transferMessagesOnBus: number;
  distinctTransferMessages: number;
  finalMessagesOnBus: number;
  exactlyOnePerTransfer: boolean;
  errorsLogged: string[];
};

async function main(): Promise<void> {
  const settings = readSettings(process.argv.slice(2));
  const load = machineLoad();
  console.error(`[bench] ${load.uptime}`);
  if (load.busyProcesses.length > 0)
    console.error(`[bench] other busy processes:\n  ${load.busyProcesses.join('\n  ')}`);
  let devnet: Devnet | undefined;
  const cleanUp = async (): Promise<void> => {
    await devnet?.stop().catch((error: unknown) => console.error('[bench] devnet stop:', error));
  };
  const guard = deadline(settings.timeoutS * 1000, 'catch-up', cleanUp);
  try {
    devnet = await startDevnet({ port: 0 });
    const info = devnet.info;
    const rpc = createJsonRpc(info.rpcUrl);
    const usdc = info.contracts.usdc;
    const expectedTransfers = settings.blocks * settings.perBlock;

    // ---- senders: derived accounts, funded with USDC by the deployer (automine still on) -------
    const senders: HDAccount[] = Array.from({ length: settings.senders }, (_, index) =>
      mnemonicToAccount(hardhatMnemonic, { addressIndex: 10 + index }),
    );
    const deployer = createEvmWriteClients({
      rpcUrl: info.rpcUrl,
      chainId: info.chainId,
      privateKey: devnetAccount(info, 'deployer').privateKey,
    });
    for (const sender of senders) {
      const hash = await deployer.walletClient.writeContract({
        address: usdc,
        abi: testTokenAbi,
        functionName: 'mint',
        args: [sender.address, 10n ** 15n],
      });
      await deployer.publicClient.waitForTransactionReceipt({ hash });
    }
    const nonces = await Promise.all(
      senders.map(async (sender) =>
        Number.parseInt((await rpc.call('eth_getTransactionCount', [sender.address, 'pending'])) as string, 16),
      ),
    );

    // ---- watched recipients: one fresh address per transfer ------------------------------------
    const watched = createWatchedAddresses();
    const recipients: Address[] = Array.from(
      { length: expectedTransfers },
      () => `0x${randomBytes(20).toString('hex')}` as Address,
    );
    for (const recipient of recipients) watched.add(NETWORK, recipient);

    // ---- produce the chain ---------------------------------------------------------------------
    await rpc.call('evm_setAutomine', [false]);
    const firstBlock = Number.parseInt((await rpc.call('eth_blockNumber')) as string, 16) + 1;
    const produceStarted = performance.now();
    let signMs = 0;
    let transferIndex = 0;
    const signBlock = async (): Promise<Hex[]> => {
      const started = performance.now();
      const signed: Hex[] = [];
      for (let slot = 0; slot < settings.perBlock; slot++) {
        const senderIndex = transferIndex % senders.length;
        const sender = senders[senderIndex]!;
        const recipient = recipients[transferIndex]!;
        signed.push(
          await sender.signTransaction({
            chainId: info.chainId,
            type: 'eip1559',
            to: usdc,
            data: encodeFunctionData({
              abi: erc20Abi,
              functionName: 'transfer',
              args: [recipient, BigInt(1 + (transferIndex % 1_000_000))],
            }),
            gas: 100_000n,
            maxFeePerGas: 100_000_000_000n,
            maxPriorityFeePerGas: 1_000_000_000n,
            nonce: nonces[senderIndex]!,
            value: 0n,
          }),
        );
        nonces[senderIndex]! += 1;
        transferIndex += 1;
      }
      signMs += performance.now() - started;
      return signed;
    };
    let next = await signBlock();
    for (let block = 0; block < settings.blocks; block++) {
      const current = next;
      const mined = (async () => {
        const hashes = await rpc.batch(current.map((raw) => ({ method: 'eth_sendRawTransaction', params: [raw] })));
        if (hashes.some((hash) => typeof hash !== 'string'))
          throw new Error(`block ${block}: a transaction was not accepted: ${JSON.stringify(hashes)}`);
        await rpc.call('evm_mine');
      })();
      // Sign the next block while hardhat takes this one.
      if (block + 1 < settings.blocks) next = await signBlock();
      await mined;
      if ((block + 1) % 500 === 0 || block + 1 === settings.blocks) {
        const seconds = (performance.now() - produceStarted) / 1000;
        console.error(
          `[bench] produced ${fmt(block + 1)}/${fmt(settings.blocks)} blocks (${fmt((block + 1) * settings.perBlock)} transfers) in ${seconds.toFixed(1)} s (${fmt((block + 1) / seconds)} blocks/s)`,
        );
      }
    }
    const produceSeconds = (performance.now() - produceStarted) / 1000;
    const head = Number.parseInt((await rpc.call('eth_blockNumber')) as string, 16);
    if (head - firstBlock + 1 !== settings.blocks)
      throw new Error(`expected ${settings.blocks} new blocks from ${firstBlock}, the head is ${head}`);
    // Spot-check that every block holds exactly its transfers.
    for (const number of [firstBlock, Math.floor((firstBlock + head) / 2), head]) {
      const count = Number.parseInt(
        (await rpc.call('eth_getBlockTransactionCountByNumber', [`0x${number.toString(16)}`])) as string,
        16,
      );
      if (count !== settings.perBlock)
        throw new Error(`block ${number} holds ${count} transactions, expected ${settings.perBlock}`);
    }
    console.error(
      `[bench] chain ready: blocks 0..${head}, ${fmt(expectedTransfers)} transfers in blocks ${firstBlock}..${head}; signing took ${(signMs / 1000).toFixed(1)} s of ${produceSeconds.toFixed(1)} s`,
    );

    // ---- catch up ------------------------------------------------------------------------------
    const loadBefore = loadAverage1m();
    const runs: RunResult[] = [];
    // First, bounded, the follower as Weir starts it (default eth_getLogs range); then the measured runs.
    const plan: { run: number; maxLogRange: number | null; stallS: number }[] = [
      ...(settings.probeDefault ? [{ run: 0, maxLogRange: null, stallS: settings.stallS }] : []),
      ...Array.from({ length: settings.runs }, (_, index) => ({
        run: index + 1,
        maxLogRange: settings.maxLogRange,
        stallS: settings.stallS,
      })),
    ];
    const bareRuns: BareRun[] = [];
    for (const { run, maxLogRange, stallS } of plan) {
      if (run > 0) {
        const bare = await bareViemRun({
          run,
          rpcUrl: info.rpcUrl,
          tokens: [info.contracts.usdc, info.contracts.usdt, info.contracts.dai],
          head,
          logRange: settings.maxLogRange,
          batchSize: 50,
        });
        bareRuns.push(bare);
        console.error(
          `[bench] bare viem run ${run}: ${bare.seconds} s, ${fmt(bare.blocksPerSecond)} blocks/s, ${fmt(bare.logs)} logs, ${fmt(bare.httpRequests)} HTTP requests`,
        );
      }
      const bus = createInProcessBus();
      const checkpoints = createInMemoryCheckpointStore();
      const logged: string[] = [];
      let started = performance.now();
      const follower = createEvmFollower({
        network: {
          network: NETWORK,
          chainId: info.chainId,
          confirmations: 1,
          tokens: [
            { address: info.contracts.usdc, symbol: 'USDC', decimals: 6 },
            { address: info.contracts.usdt, symbol: 'USDT', decimals: 6 },
            { address: info.contracts.dai, symbol: 'DAI', decimals: 18 },
          ],
          nativeSymbol: 'ETH',
          nativeDecimals: 18,
        },
        rpc: { http: [info.rpcUrl], ws: [] },
        bus,
        watched,
        checkpoints,
        startBlock: 0n,
        pollIntervalMs: 50,
        ...(maxLogRange === null ? {} : { maxLogRange: BigInt(maxLogRange) }),
        log: (line) => {
          logged.push(line);
          if (settings.verbose)
            console.error(`[follower +${((performance.now() - started) / 1000).toFixed(2)} s] ${line}`);
        },
      });
      const hardhatCpuBefore = childCpuSeconds(/hardhat/);
      const profiler = settings.profileDir !== null && run > 0 ? new Session() : null;
      if (profiler !== null) {
        profiler.connect();
        await profiler.post('Profiler.enable');
        await profiler.post('Profiler.start');
      }
      const cpuBefore = process.cpuUsage();
      started = performance.now();
      await follower.start();
      let reportAt = started + 5_000;
      let lastProcessed: bigint | null = null;
      let progressAt = started;
      let stalled: string | null = null;
      for (;;) {
        const status = follower.status();
        if (status.processed !== null && status.processed >= BigInt(head) && status.pendingFinal === 0) break;
        if (status.processed !== lastProcessed) {
          lastProcessed = status.processed;
          progressAt = performance.now();
        } else if (performance.now() - progressAt >= stallS * 1000) {
          stalled = `no block processed for ${stallS} s (processed ${status.processed ?? 'none'} of ${head}); last error: ${status.lastError ?? 'none'}`;
          console.error(`[bench] run ${run}: stopped, ${stalled}`);
          break;
        }
        if (performance.now() >= reportAt) {
          reportAt += 5_000;
          const counters = follower.counters();
          console.error(
            `[bench] run ${run} +${((performance.now() - started) / 1000).toFixed(0)} s: processed ${status.processed ?? '-'} of ${head}, ${fmt(counters.published.transfer)} transfers published, log range ${counters.logRange}, errors ${counters.errors}${status.lastError === null ? '' : `, last: ${status.lastError}`}`,
          );
        }
        await sleep(2);
      }
      const seconds = (performance.now() - started) / 1000;
      const cpu = process.cpuUsage(cpuBefore);
      const hardhatCpuSeconds = childCpuSeconds(/hardhat/) - hardhatCpuBefore;
      const counters = follower.counters();
      await follower.stop();
      if (profiler !== null && settings.profileDir !== null) {
        const { profile } = await profiler.post('Profiler.stop');
        profiler.disconnect();
        await mkdir(settings.profileDir, { recursive: true });
        const file = join(settings.profileDir, `catch-up-run${run}.cpuprofile`);
        await writeFile(file, JSON.stringify(profile));
        console.error(`[bench] CPU profile of run ${run}: ${file}`);
      }

      // Count what reached the bus (a fresh durable reads the in-process log from the start).
      let transferMessages = 0;
      let finalMessages = 0;
      const transferIds = new Set<string>();
      const consumer = await bus.consume({ durableName: 'bench-count', filterSubject: 'chain.>' }, async (message) => {
        if (message.subject === `chain.${NETWORK}.transfer`) {
          transferMessages += 1;
          transferIds.add(message.messageId ?? `#${transferMessages}`);
        } else if (message.subject === `chain.${NETWORK}.final`) {
          finalMessages += 1;
        }
      });
      const countUntil = performance.now() + 60_000;
      while (
        transferMessages + finalMessages <
          counters.published.transfer + counters.published.final + counters.published.reorg &&
        performance.now() < countUntil
      )
        await sleep(20);
      await sleep(50);
      await consumer.stop();
      await bus.close();

      const result: RunResult = {
        run,
        maxLogRange: maxLogRange ?? 'follower default (2000)',
        stalled,
        processed: follower.status().processed?.toString() ?? null,
        seconds: +seconds.toFixed(2),
        blocks: head + 1,
        transfers: counters.published.transfer,
        blocksPerSecond: Math.round((head + 1) / seconds),
        transfersPerSecond: Math.round(counters.published.transfer / seconds),
        followerCpuSeconds: +((cpu.user + cpu.system) / 1e6).toFixed(2),
        hardhatCpuSeconds: +hardhatCpuSeconds.toFixed(2),
        counters,
        transferMessagesOnBus: transferMessages,
        distinctTransferMessages: transferIds.size,
        finalMessagesOnBus: finalMessages,
        exactlyOnePerTransfer:
          transferMessages === expectedTransfers &&
          transferIds.size === expectedTransfers &&
          counters.published.transfer === expectedTransfers,
        errorsLogged: logged.filter((line) => !/no checkpoint: starting/.test(line)).slice(0, 10),
      };
      runs.push(result);
      console.error(
        `[bench] run ${run} (range ${result.maxLogRange}): ${result.seconds} s, ${fmt(result.transfersPerSecond)} transfers/s, ${fmt(result.blocksPerSecond)} blocks/s, ${fmt(result.transferMessagesOnBus)} transfer messages, follower CPU ${result.followerCpuSeconds} s, hardhat CPU ${result.hardhatCpuSeconds} s`,
      );
    }
    const loadAfter = loadAverage1m();

    const measured = runs.filter((run) => run.run > 0);
    const byTime = measured.filter((run) => run.stalled === null).sort((a, b) => a.seconds - b.seconds);
    const medianRun = byTime[Math.floor((byTime.length - 1) / 2)];
    const defaultRun = runs.find((run) => run.run === 0);
    const bareByTime = [...bareRuns].sort((a, b) => a.seconds - b.seconds);
    const medianBare = bareByTime[Math.floor((bareByTime.length - 1) / 2)];
    const shareOfBare =
      medianRun === undefined || medianBare === undefined
        ? null
        : +(medianRun.blocksPerSecond / medianBare.blocksPerSecond).toFixed(3);
    // Each follower run against the bare run just before it: less exposed to load that comes and goes.
    const pairShares = measured
      .map((run) => {
        const bare = bareRuns.find((candidate) => candidate.run === run.run);
        return bare === undefined ? null : +(run.blocksPerSecond / bare.blocksPerSecond).toFixed(3);
      })
      .filter((share): share is number => share !== null);
    const medianPairShare = [...pairShares].sort((a, b) => a - b)[Math.floor((pairShares.length - 1) / 2)] ?? null;
    const summary = {
      benchmark: 'evm-catch-up',
      date: new Date().toISOString(),
      machine: machineInfo(),
      load: {
        uptimeBefore: load.uptime,
        loadAverage1m: { before: loadBefore, after: loadAfter },
        busyProcessesBefore: load.busyProcesses,
        busyProcessesAfter: machineLoad().busyProcesses,
      },
      settings,
      chain: {
        head,
        blocks: head + 1,
        transferBlocks: { from: firstBlock, to: head },
        transfers: expectedTransfers,
        watchedAddresses: watched.size(NETWORK),
        produceSeconds: +produceSeconds.toFixed(1),
        signSeconds: +(signMs / 1000).toFixed(1),
      },
      follower: { confirmations: 1, maxLogRangeMeasured: settings.maxLogRange, blockBatchSize: 50, websocket: false },
      defaultRange:
        defaultRun === undefined
          ? null
          : {
              reachedHead: defaultRun.stalled === null,
              stalled: defaultRun.stalled,
              seconds: defaultRun.seconds,
              transfersPublished: defaultRun.transfers,
              counters: defaultRun.counters,
            },
      medianRun:
        medianRun === undefined
          ? null
          : {
              run: medianRun.run,
              seconds: medianRun.seconds,
              transfersPerSecond: medianRun.transfersPerSecond,
              blocksPerSecond: medianRun.blocksPerSecond,
            },
      bareViem:
        medianBare === undefined
          ? null
          : {
              median: medianBare,
              followerShareOfBareRate: shareOfBare,
              pairShares,
              medianPairShare,
              target: 0.5,
              runs: bareRuns,
            },
      exactlyOnePerTransfer: measured.length > 0 && measured.every((run) => run.exactlyOnePerTransfer),
      runs,
    };
    const json = JSON.stringify(
      summary,
      (_key, value: unknown) => (typeof value === 'bigint' ? value.toString() : value),
      2,
    );
    if (settings.jsonOut !== null) await writeFile(settings.jsonOut, `${json}\n`);
    console.log(json);
    console.log('');
    console.log(
      markdownTable(
        [
          'Run',
          'eth_getLogs range',
          'seconds',
          'blocks',
          'transfers/s',
          'blocks/s',
          'transfer messages (distinct)',
          'finals',
          'follower CPU s',
          'hardhat CPU s',
          'HTTP requests',
          'RPC calls by method',
        ],
        runs.map((run) => [
          run.run === 0
            ? `default (${run.stalled === null ? 'reached the head' : 'STALLED'})`
            : run.run === medianRun?.run
              ? `${run.run} (median)`
              : run.run,
          run.maxLogRange,
          run.seconds,
          fmt(run.blocks),
          fmt(run.transfersPerSecond),
          fmt(run.blocksPerSecond),
          `${fmt(run.transferMessagesOnBus)} (${fmt(run.distinctTransferMessages)})`,
          fmt(run.finalMessagesOnBus),
          run.followerCpuSeconds,
          run.hardhatCpuSeconds,
          fmt(run.counters.rpc.httpRequests),
          Object.entries(run.counters.rpc.calls)
            .map(([method, calls]) => `${method} ${fmt(calls)}`)
            .join(', '),
        ]),
        [false, true, true, true, true, true, true, true, true, true, true, false],
      ),
    );
    console.log('');
    if (defaultRun?.stalled !== null && defaultRun !== undefined)
      console.log(`With the follower's default eth_getLogs range: ${defaultRun.stalled}`);
    if (medianBare !== undefined && medianRun !== undefined && shareOfBare !== null) {
      console.log(
        markdownTable(
          ['Bare viem run', 'seconds', 'blocks', 'logs', 'blocks/s', 'HTTP requests'],
          bareRuns.map((bare) => [
            bare.run === medianBare.run ? `${bare.run} (median)` : bare.run,
            bare.seconds,
            fmt(bare.blocks),
            fmt(bare.logs),
            fmt(bare.blocksPerSecond),
            fmt(bare.httpRequests),
          ]),
          [false, true, true, true, true, true],
        ),
      );
      console.log('');
      console.log(
        `Follower median ${fmt(medianRun.blocksPerSecond)} blocks/s = ${(shareOfBare * 100).toFixed(1)}% of the bare viem loop's median ${fmt(medianBare.blocksPerSecond)} blocks/s (target ≥ 50%): ${shareOfBare >= 0.5 ? 'met' : 'NOT met'}. Run by run (each follower run / the bare run before it): ${pairShares.map((share) => `${(share * 100).toFixed(1)}%`).join(', ')}; median ${medianPairShare === null ? '-' : `${(medianPairShare * 100).toFixed(1)}%`}.`,
      );
    }
    console.log(
      `Exactly ${fmt(expectedTransfers)} transfer messages published in every measured run: ${summary.exactlyOnePerTransfer ? 'yes' : 'NO'}. Load average (1 min) ${loadBefore} → ${loadAfter}.`,
    );
  } finally {
    await cleanUp();
    guard.clear();
    const left = leftoverHardhatChildren();
    if (left.length > 0) console.error(`[bench] hardhat processes left: ${left.join('; ')}`);
  }
}

await main();
