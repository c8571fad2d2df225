/**
 * In-process matching cost of the EVM follower: 1,000,000 watched deposit addresses in
 * `createWatchedAddresses()`, then a stream of synthetic ERC-20 Transfer logs and native
 * transactions, about 1% of them to watched addresses, through the follower's own code path:
 *
 *   decode   `getTransferLogs` / `getBlocksWithTransactions` (get-transfer-logs.ts, get-blocks.ts)
 *            parse the node's raw JSON-RPC answers; here the answers come from a stub `RpcEndpoints`
 *            that returns pre-built arrays shaped as hardhat/geth send them (every field a node
 *            returns, hex strings, lowercase addresses in topics, checksum-free)
 *   match    `nativeTransferCandidates` + `extractTransfers` (extract-transfers.ts): registry token,
 *            non-zero value, `watched.has(network, to)`, ordering, message building
 *
 *   node --expose-gc --import tsx bench/evm/matching.ts [--addresses 1000000] [--seconds 3] [--rounds 3] [--json FILE]
 *   (npm run bench:matching)
 *
 * Reports logs/s for match only (pre-decoded logs, as extractTransfers receives them) and for
 * decode + match, native transactions/s likewise, and memory (RSS, heap used) before and after
 * loading the addresses, each after a full GC. Targets: >= 200,000 logs/s matched in process;
 * <= 300 MB RSS after loading the addresses. Prints a JSON summary and a Markdown table. Not a test.
 */
import { randomBytes } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { getAddress } from 'viem';
import type { ChainAsset } from '../../src/chain-ingest/chain-messages.ts';
import {
  extractTransfers,
  nativeTransferCandidates,
  type FollowedToken,
} from '../../src/chain-ingest/evm/follower/extract-transfers.ts';
import {
  getBlocksWithTransactions,
  type BlockWithTransactions,
} from '../../src/chain-ingest/evm/follower/get-blocks.ts';
import {
  ERC20_TRANSFER_TOPIC,
  getTransferLogs,
  type TokenTransferLog,
} from '../../src/chain-ingest/evm/follower/get-transfer-logs.ts';
import type { RpcEndpoints } from '../../src/chain-ingest/evm/follower/rpc-endpoints.ts';
import { createWatchedAddresses, type WatchedAddresses } from '../../src/chain-ingest/watched-addresses.ts';
import {
  deadline,
  fmt,
  loadAverage1m,
  machineInfo,
  machineLoad,
  markdownTable,
  numberFlag,
  stringFlag,
} from './support/bench-env.ts';

const NETWORK = 'ethereum';
const CHAIN_ID = 1;
const TARGET_LOGS_PER_SECOND = 200_000;
const TARGET_RSS_MB = 300;
/** Raw logs per eth_getLogs answer and blocks they span (a busy mainnet range: 200 registry-token Transfers per block). */
const LOGS_PER_ANSWER = 1_000;
const BLOCKS_PER_ANSWER = 5;
/** Transactions per block (mainnet carries about 150-250). */
const TRANSACTIONS_PER_BLOCK = 200;
/** Distinct pre-built answers, cycled: 20,000 logs and 20 × 5 blocks of 200 transactions. */
const ANSWERS = 20;
const HIT_RATE = 0.01;

const TOKENS: FollowedToken[] = [
  { address: '0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48', symbol: 'USDC', decimals: 6 },
  { address: '0xdAC17F958D2ee523a2206206994597C13D831ec7', symbol: 'USDT', decimals: 6 },
  { address: '0x6B175474E89094C44Da98b954EedeAC495271d0F', symbol: 'DAI', decimals: 18 },
];
const NATIVE: ChainAsset = { address: 'native', symbol: 'ETH', decimals: 18 };

type Settings = { addresses: number; seconds: number; rounds: number; jsonOut: string | null; timeoutS: number };

function readSettings(argv: readonly string[]): Settings {
  return {
    addresses: numberFlag(argv, '--addresses', 1_000_000, 1_000, 10_000_000),
    seconds: numberFlag(argv, '--seconds', 3, 0.5, 60),
    rounds: numberFlag(argv, '--rounds', 3, 1, 20),
    jsonOut: stringFlag(argv, '--json') ?? null,
    timeoutS: numberFlag(argv, '--timeout-s', 600, 10, 3_600),
  };
}

type Memory = { rssMB: number; heapUsedMB: number; heapTotalMB: number; externalMB: number };

function memory(): Memory {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (gc !== undefined) {
    gc();
    gc();
  }
  const usage = process.memoryUsage();
  const mb = (bytes: number): number => +(bytes / 1e6).toFixed(1);
  return {
    rssMB: mb(usage.rss),
    heapUsedMB: mb(usage.heapUsed),
    heapTotalMB: mb(usage.heapTotal),
    externalMB: mb(usage.external),
  };
}

const hex = (bytes: number): string => `0x${randomBytes(bytes).toString('hex')}`;
const quantity = (value: number | bigint): string => `0x${value.toString(16)}`;
const addressTopic = (address: string): string => `0x${'0'.repeat(24)}${address.slice(2).toLowerCase()}`;

/** A stub endpoint pool that answers each method from a queue of pre-built answers. */
function stubRpc(answers: Map<string, unknown>): RpcEndpoints {
  return {
    request: async (method, params) => {
      const key = method === 'eth_getBlockByNumber' ? `${method}:${String(params[0])}` : method;
      const answer = answers.get(key);
      if (answer === undefined) throw new Error(`stub rpc: no answer for ${key}`);
      return answer;
    },
    current: () => 'stub://bench',
    counters: () => ({
      calls: {},
      httpRequests: 0,
      failures: { unreachable: 0, timeout: 0, rejected: 0 },
      endpointSwitches: 0,
    }),
  };
}

type Answer = {
  fromBlock: number;
  toBlock: number;
  rawLogs: unknown[];
  rawBlocks: unknown[];
  logHits: number;
  nativeHits: number;
};

/** One eth_getLogs answer over BLOCKS_PER_ANSWER blocks and those blocks with full transactions, as a node sends them. */
function buildAnswer(index: number, watchedSample: readonly string[], pick: () => number): Answer {
  const fromBlock = 20_000_000 + index * BLOCKS_PER_ANSWER;
  const toBlock = fromBlock + BLOCKS_PER_ANSWER - 1;
  const blockHashes = Array.from({ length: BLOCKS_PER_ANSWER }, () => hex(32));
  const rawLogs: unknown[] = [];
  const rawBlocks: unknown[] = [];
  let logHits = 0;
  let nativeHits = 0;
  const recipient = (): { address: string; hit: boolean } => {
    const hit = Math.random() < HIT_RATE;
    return { address: hit ? watchedSample[pick()]!.toLowerCase() : hex(20), hit };
  };
  for (let block = 0; block < BLOCKS_PER_ANSWER; block++) {
    const number = fromBlock + block;
    const transactions: unknown[] = [];
    for (let position = 0; position < TRANSACTIONS_PER_BLOCK; position++) {
      // Half are plain value transfers (to a random or watched address), half token calls.
      const native = position % 2 === 0;
      const to = native
        ? recipient()
        : { address: TOKENS[position % TOKENS.length]!.address.toLowerCase(), hit: false };
      if (to.hit) nativeHits += 1;
      transactions.push({
        blockHash: blockHashes[block],
        blockNumber: quantity(number),
        from: hex(20),
        gas: quantity(native ? 21_000 : 65_000),
        gasPrice: quantity(12_000_000_000),
        maxFeePerGas: quantity(20_000_000_000),
        maxPriorityFeePerGas: quantity(1_000_000_000),
        hash: hex(32),
        input: native
          ? '0x'
          : `0xa9059cbb${addressTopic(hex(20)).slice(2)}${1_000_000n.toString(16).padStart(64, '0')}`,
        nonce: quantity(position),
        to: to.address,
        transactionIndex: quantity(position),
        value: native ? quantity(10n ** 16n + BigInt(position)) : '0x0',
        type: '0x2',
        accessList: [],
        chainId: '0x1',
        v: '0x1',
        r: hex(32),
        s: hex(32),
        yParity: '0x1',
      });
    }
    rawBlocks.push({
      number: quantity(number),
      hash: blockHashes[block],
      parentHash: block === 0 ? hex(32) : blockHashes[block - 1],
      logsBloom: hex(256),
      transactions,
      timestamp: quantity(1_700_000_000 + number * 12),
      gasLimit: quantity(30_000_000),
      gasUsed: quantity(14_000_000),
      baseFeePerGas: quantity(11_000_000_000),
      miner: hex(20),
      stateRoot: hex(32),
      receiptsRoot: hex(32),
      transactionsRoot: hex(32),
      size: quantity(90_000),
      uncles: [],
      withdrawals: [],
    });
  }
  for (let position = 0; position < LOGS_PER_ANSWER; position++) {
    const block = Math.floor((position * BLOCKS_PER_ANSWER) / LOGS_PER_ANSWER);
    const token = TOKENS[position % TOKENS.length]!;
    const to = recipient();
    if (to.hit) logHits += 1;
    rawLogs.push({
      address: token.address.toLowerCase(),
      topics: [ERC20_TRANSFER_TOPIC, addressTopic(hex(20)), addressTopic(to.address)],
      data: `0x${BigInt(1 + Math.floor(Math.random() * 1e12))
        .toString(16)
        .padStart(64, '0')}`,
      blockNumber: quantity(fromBlock + block),
      transactionHash: hex(32),
      transactionIndex: quantity(position % TRANSACTIONS_PER_BLOCK),
      blockHash: blockHashes[block],
      logIndex: quantity(position),
      removed: false,
    });
  }
  return { fromBlock, toBlock, rawLogs, rawBlocks, logHits, nativeHits };
}

const HASH = /^0x[0-9a-fA-F]{64}$/;
const QUANTITY = /^0x[0-9a-fA-F]+$/;
const DATA_WORD = /^0x[0-9a-fA-F]{64}$/;
const LOWER_TOKENS = new Set(TOKENS.map((token) => token.address.toLowerCase()));

/**
 * What-if, for the report only: getTransferLogs' checks (shape, hashes, quantities, range, token)
 * with addresses kept lowercase (regex-checked) instead of EIP-55 checksummed by `getAddress`
 * (a keccak-256 per address). The follower code itself is not changed.
 */
function decodeLogsLowercase(raw: readonly unknown[], from: number, to: number): TokenTransferLog[] {
  const logs: TokenTransferLog[] = [];
  const smallQuantity = (value: unknown): number => {
    if (typeof value !== 'string' || !QUANTITY.test(value)) throw new Error(`not a quantity: ${String(value)}`);
    return Number.parseInt(value, 16);
  };
  const hash = (value: unknown): string => {
    if (typeof value !== 'string' || !HASH.test(value)) throw new Error(`not a hash: ${String(value)}`);
    return value.toLowerCase();
  };
  for (const item of raw) {
    const log = item as Record<string, unknown>;
    if (log.removed === true) continue;
    const topics = log.topics as unknown[];
    const data = log.data;
    if (!Array.isArray(topics) || topics.length !== 3 || typeof data !== 'string' || !DATA_WORD.test(data)) continue;
    if (hash(topics[0]) !== ERC20_TRANSFER_TOPIC) continue;
    const blockNumber = smallQuantity(log.blockNumber);
    if (blockNumber < from || blockNumber > to) throw new Error('log outside the range');
    const token = typeof log.address === 'string' ? log.address.toLowerCase() : '';
    if (!LOWER_TOKENS.has(token)) throw new Error(`log of ${token}, not asked for`);
    logs.push({
      blockNumber,
      blockHash: hash(log.blockHash),
      transactionHash: hash(log.transactionHash),
      transactionIndex: smallQuantity(log.transactionIndex),
      logIndex: smallQuantity(log.logIndex),
      token,
      from: `0x${hash(topics[1]).slice(26)}`,
      to: `0x${hash(topics[2]).slice(26)}`,
      value: BigInt(data),
    });
  }
  return logs;
}

type Decoded = { answer: Answer; logs: TokenTransferLog[]; blocks: BlockWithTransactions[]; rpc: RpcEndpoints };

async function decodeAnswer(answer: Answer): Promise<Decoded> {
  const answers = new Map<string, unknown>([['eth_getLogs', answer.rawLogs]]);
  for (const [offset, raw] of answer.rawBlocks.entries())
    answers.set(`eth_getBlockByNumber:${quantity(answer.fromBlock + offset)}`, raw);
  const rpc = stubRpc(answers);
  const tokens = TOKENS.map((token) => token.address);
  const logs = await getTransferLogs(rpc, { network: NETWORK, tokens, from: answer.fromBlock, to: answer.toBlock });
  const blocks = await getBlocksWithTransactions(rpc, { network: NETWORK, from: answer.fromBlock, to: answer.toBlock });
  return { answer, logs, blocks, rpc };
}

type RoundResult = { seconds: number; logs: number; transactions: number; transfers: number };

/** Repeats `work` over the answers for about `seconds`; returns what it got through. */
async function timed(
  seconds: number,
  decoded: readonly Decoded[],
  work: (item: Decoded) => Promise<{ logs: number; transactions: number; transfers: number }>,
): Promise<RoundResult> {
  const started = performance.now();
  const until = started + seconds * 1000;
  let logs = 0;
  let transactions = 0;
  let transfers = 0;
  let index = 0;
  while (performance.now() < until) {
    for (let batch = 0; batch < decoded.length; batch++) {
      const done = await work(decoded[index % decoded.length]!);
      index += 1;
      logs += done.logs;
      transactions += done.transactions;
      transfers += done.transfers;
    }
  }
  return { seconds: (performance.now() - started) / 1000, logs, transactions, transfers };
}

const median = (values: readonly number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor((sorted.length - 1) / 2)]!;
};

async function main(): Promise<void> {
  const settings = readSettings(process.argv.slice(2));
  const guard = deadline(settings.timeoutS * 1000, 'matching', async () => undefined);
  const load = machineLoad();
  console.error(`[bench] ${load.uptime}`);
  if (load.busyProcesses.length > 0)
    console.error(`[bench] other busy processes:\n  ${load.busyProcesses.join('\n  ')}`);
  const gcExposed = typeof (globalThis as { gc?: unknown }).gc === 'function';
  if (!gcExposed) console.error('[bench] run with --expose-gc for stable memory numbers (npm run bench:matching does)');

  // Warm the code paths that loading uses, so their compiled code is in the baseline.
  getAddress(hex(20));
  const baseline = memory();

  // ---- load 1,000,000 watched addresses --------------------------------------------------------
  const watched: WatchedAddresses = createWatchedAddresses();
  const sampleSize = 10_000;
  const sample: string[] = [];
  const loadStarted = performance.now();
  for (let index = 0; index < settings.addresses; index++) {
    // As the watched-addresses projection adds them: the session's EIP-55 deposit address.
    const address = getAddress(hex(20));
    watched.add(NETWORK, address);
    if (index % Math.max(1, Math.floor(settings.addresses / sampleSize)) === 0 && sample.length < sampleSize)
      sample.push(address);
  }
  const loadMs = performance.now() - loadStarted;
  const loaded = memory();
  console.error(
    `[bench] ${fmt(watched.size(NETWORK))} addresses loaded in ${fmt(loadMs)} ms; RSS ${loaded.rssMB} MB, heap used ${loaded.heapUsedMB} MB`,
  );

  // ---- the stream ----------------------------------------------------------------------------
  let cursor = 0;
  const pick = (): number => (cursor = (cursor + 7919) % sample.length);
  const answers = Array.from({ length: ANSWERS }, (_, index) => buildAnswer(index, sample, pick));
  const decoded: Decoded[] = [];
  for (const answer of answers) decoded.push(await decodeAnswer(answer));
  const expectedHits = answers.reduce((sum, answer) => sum + answer.logHits + answer.nativeHits, 0);
  const totalLogs = answers.reduce((sum, answer) => sum + answer.rawLogs.length, 0);
  const totalTransactions = answers.length * BLOCKS_PER_ANSWER * TRANSACTIONS_PER_BLOCK;
  const nativeValueTransfers = totalTransactions / 2;
  const withStream = memory();

  const observedAt = new Date().toISOString();
  const extract = (_item: Decoded, logs: readonly TokenTransferLog[], blocks: readonly BlockWithTransactions[]) => {
    const candidates = nativeTransferCandidates(NETWORK, blocks, watched);
    // The follower asks receipts for the candidates; here every candidate succeeded.
    const succeededNative = new Set(candidates.map((candidate) => candidate.transaction.hash));
    return extractTransfers({
      network: NETWORK,
      chainId: CHAIN_ID,
      nativeAsset: NATIVE,
      tokens: TOKENS,
      watched,
      blocks,
      logs,
      succeededNative,
      observedAt,
    });
  };
  // Correctness: every planted hit, and nothing else, becomes a transfer message.
  const found = decoded.reduce((sum, item) => sum + extract(item, item.logs, item.blocks).length, 0);
  if (found !== expectedHits)
    throw new Error(`expected ${expectedHits} transfers to watched addresses, extractTransfers found ${found}`);

  const cases: {
    name: string;
    unit: 'logs' | 'transactions';
    work: (item: Decoded) => Promise<{ logs: number; transactions: number; transfers: number }>;
  }[] = [
    {
      name: 'match: extractTransfers on decoded Transfer logs (no transactions)',
      unit: 'logs',
      work: async (item) => ({
        logs: item.logs.length,
        transactions: 0,
        transfers: extract(item, item.logs, []).length,
      }),
    },
    {
      name: 'decode + match: getTransferLogs (raw eth_getLogs answer) + extractTransfers',
      unit: 'logs',
      work: async (item) => {
        const logs = await getTransferLogs(item.rpc, {
          network: NETWORK,
          tokens: TOKENS.map((token) => token.address),
          from: item.answer.fromBlock,
          to: item.answer.toBlock,
        });
        return { logs: logs.length, transactions: 0, transfers: extract(item, logs, []).length };
      },
    },
    {
      name: 'what-if (not in src): the same decode with lowercase addresses instead of EIP-55 checksums, + extractTransfers',
      unit: 'logs',
      work: async (item) => {
        const logs = decodeLogsLowercase(item.answer.rawLogs, item.answer.fromBlock, item.answer.toBlock);
        return { logs: logs.length, transactions: 0, transfers: extract(item, logs, []).length };
      },
    },
    {
      name: 'match: nativeTransferCandidates + extractTransfers on decoded blocks (no logs)',
      unit: 'transactions',
      work: async (item) => ({
        logs: 0,
        transactions: TRANSACTIONS_PER_BLOCK * item.blocks.length,
        transfers: extract(item, [], item.blocks).length,
      }),
    },
    {
      name: 'decode + match: getBlocksWithTransactions (raw blocks, full transactions) + extract',
      unit: 'transactions',
      work: async (item) => {
        const blocks = await getBlocksWithTransactions(item.rpc, {
          network: NETWORK,
          from: item.answer.fromBlock,
          to: item.answer.toBlock,
        });
        return {
          logs: 0,
          transactions: TRANSACTIONS_PER_BLOCK * blocks.length,
          transfers: extract(item, [], blocks).length,
        };
      },
    },
    {
      name: 'decode + match: a whole range as the follower does it (logs + blocks)',
      unit: 'logs',
      work: async (item) => {
        const logs = await getTransferLogs(item.rpc, {
          network: NETWORK,
          tokens: TOKENS.map((token) => token.address),
          from: item.answer.fromBlock,
          to: item.answer.toBlock,
        });
        const blocks = await getBlocksWithTransactions(item.rpc, {
          network: NETWORK,
          from: item.answer.fromBlock,
          to: item.answer.toBlock,
        });
        return {
          logs: logs.length,
          transactions: TRANSACTIONS_PER_BLOCK * blocks.length,
          transfers: extract(item, logs, blocks).length,
        };
      },
    },
  ];

  const loadBefore = loadAverage1m();
  const results = [];
  for (const testCase of cases) {
    await timed(Math.min(1, settings.seconds), decoded, testCase.work); // warm-up
    const rounds: RoundResult[] = [];
    for (let round = 0; round < settings.rounds; round++)
      rounds.push(await timed(settings.seconds, decoded, testCase.work));
    const rates = rounds.map(
      (result) => (testCase.unit === 'logs' ? result.logs : result.transactions) / result.seconds,
    );
    const hitShare =
      rounds[0]!.transfers / ((testCase.unit === 'logs' ? rounds[0]!.logs : rounds[0]!.transactions) || 1);
    results.push({
      case: testCase.name,
      unit: testCase.unit,
      perSecondMedian: Math.round(median(rates)),
      perSecondRounds: rates.map((rate) => Math.round(rate)),
      transactionsPerSecondMedian: Math.round(median(rounds.map((result) => result.transactions / result.seconds))),
      transfersPerUnit: +hitShare.toFixed(4),
    });
    console.error(`[bench] ${testCase.name}: ${fmt(median(rates))} ${testCase.unit}/s`);
  }
  const loadAfter = loadAverage1m();
  const afterRuns = memory();

  const matchOnly = results[0]!.perSecondMedian;
  const decodeAndMatch = results[1]!.perSecondMedian;
  const summary = {
    benchmark: 'evm-matching',
    date: new Date().toISOString(),
    machine: machineInfo(),
    load: {
      uptimeBefore: load.uptime,
      loadAverage1m: { before: loadBefore, after: loadAfter },
      busyProcessesBefore: load.busyProcesses,
    },
    gcExposed,
    watchedAddresses: watched.size(NETWORK),
    loadAddressesMs: Math.round(loadMs),
    memory: {
      baseline,
      afterLoadingAddresses: loaded,
      watchedSetMB: {
        rss: +(loaded.rssMB - baseline.rssMB).toFixed(1),
        heapUsed: +(loaded.heapUsedMB - baseline.heapUsedMB).toFixed(1),
      },
      withStreamBuilt: withStream,
      afterRuns,
    },
    stream: {
      logs: totalLogs,
      transactions: totalTransactions,
      nativeValueTransfers,
      hits: expectedHits,
      hitShareOfLogs: +(answers.reduce((sum, answer) => sum + answer.logHits, 0) / totalLogs).toFixed(4),
      hitShareOfNativeTransfers: +(
        answers.reduce((sum, answer) => sum + answer.nativeHits, 0) / nativeValueTransfers
      ).toFixed(4),
      logsPerEthGetLogsAnswer: LOGS_PER_ANSWER,
      blocksPerAnswer: BLOCKS_PER_ANSWER,
      transactionsPerBlock: TRANSACTIONS_PER_BLOCK,
    },
    settings,
    results,
    targets: {
      logsPerSecond: {
        target: TARGET_LOGS_PER_SECOND,
        matchOnly,
        decodeAndMatch,
        met: matchOnly >= TARGET_LOGS_PER_SECOND,
        metIncludingDecode: decodeAndMatch >= TARGET_LOGS_PER_SECOND,
      },
      rssAfterLoadingMB: { target: TARGET_RSS_MB, value: loaded.rssMB, met: loaded.rssMB <= TARGET_RSS_MB },
    },
  };
  const json = JSON.stringify(summary, null, 2);
  if (settings.jsonOut !== null) await writeFile(settings.jsonOut, `${json}\n`);
  console.log(json);
  console.log('');
  console.log(
    markdownTable(
      ['Case', 'per second (median)', 'rounds', 'unit'],
      results.map((result) => [
        result.case,
        fmt(result.perSecondMedian),
        result.perSecondRounds.map((rate) => fmt(rate)).join(' / '),
        result.unit,
      ]),
      [false, true, false, false],
    ),
  );
  console.log('');
  console.log(
    markdownTable(
      ['Memory (after full GC)', 'RSS MB', 'heap used MB'],
      [
        ['baseline (modules loaded, nothing watched)', baseline.rssMB, baseline.heapUsedMB],
        [`after loading ${fmt(watched.size(NETWORK))} watched addresses`, loaded.rssMB, loaded.heapUsedMB],
        ['difference: the watched set', summary.memory.watchedSetMB.rss, summary.memory.watchedSetMB.heapUsed],
      ],
      [false, true, true],
    ),
  );
  console.log('');
  console.log(
    markdownTable(
      ['Target', 'Result', 'Met?'],
      [
        [
          `≥ ${fmt(TARGET_LOGS_PER_SECOND)} logs/s matched in process`,
          `${fmt(matchOnly)} logs/s (match); ${fmt(decodeAndMatch)} logs/s (decode + match)`,
          `${summary.targets.logsPerSecond.met ? 'yes' : 'NO'} / ${summary.targets.logsPerSecond.metIncludingDecode ? 'yes' : 'NO'}`,
        ],
        [
          `RSS ≤ ${TARGET_RSS_MB} MB after loading`,
          `${loaded.rssMB} MB (heap used ${loaded.heapUsedMB} MB)`,
          summary.targets.rssAfterLoadingMB.met ? 'yes' : 'NO',
        ],
      ],
      [false, false, false],
    ),
  );
  guard.clear();
}

await main();
