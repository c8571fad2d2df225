import type { DestinationStream } from 'pino';
import { pino } from 'pino';
import { readConfig, SETTINGS, settingArgumentCount } from '../app/config.ts';
import { createLogger, type Logger } from '../shared/logger.ts';
import { DEVNET_SETTING_FLAGS } from './usage.ts';

/** The settings `weir devnet` reads (its log's). */
const DEVNET_SETTINGS = Object.values(SETTINGS).filter((setting) => DEVNET_SETTING_FLAGS.includes(setting.flag));

/**
 * `weir devnet`'s logger: serve's (pino JSON lines, or pretty ones; WEIR_LOG_LEVEL / --log-level,
 * WEIR_LOG_PRETTY / --log-pretty, read and checked as serve reads them), on stderr: stdout is the
 * devnet's JSON, which a script parses. Only the log settings are read: the others are serve's.
 */
export function devnetLogger(
  argv: readonly string[],
  env: NodeJS.ProcessEnv,
  destination: DestinationStream = pino.destination({ dest: 2, sync: true }),
): Logger {
  const logArgs: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    if (!DEVNET_SETTING_FLAGS.includes(argv[i]!.split('=', 1)[0]!)) continue;
    const count = settingArgumentCount(argv, i);
    logArgs.push(...argv.slice(i, i + count));
    i += count - 1;
  }
  const logEnv = Object.fromEntries(DEVNET_SETTINGS.map((setting) => [setting.env, env[setting.env]]));
  const { logLevel, logPretty } = readConfig(logArgs, logEnv);
  return createLogger({ level: logLevel, pretty: logPretty, destination });
}

/** Where each local chain of `weir devnet` listens and what it holds, as its start found them. */
export type RunningDevnet = {
  evm: { rpcUrl: string; out: string | null };
  solana: { rpcUrl: string; wsUrl: string; usdc: string; usdt: string; faucet: string };
  tron: { proxyUrl: string; nodeUrl: string; usdt: string; usdc: string };
};

/** The lines a started `weir devnet` logs: one per chain, each with its `event` and addresses as fields. */
export function logDevnetRunning(logger: Logger, devnet: RunningDevnet): void {
  const { evm, solana, tron } = devnet;
  logger.info(
    { event: 'devnet.running', chain: 'evm', rpcUrl: evm.rpcUrl, out: evm.out },
    `devnet running on ${evm.rpcUrl}${evm.out ? `; details in ${evm.out}` : ''}; Ctrl-C to stop`,
  );
  logger.info(
    { event: 'devnet.running', chain: 'solana', ...solana },
    `local Solana running on ${solana.rpcUrl} (give Weir WEIR_RPC_1399811148=${solana.rpcUrl},${solana.wsUrl}): test USDC ${solana.usdc}, test USDT ${solana.usdt}, faucet ${solana.faucet} (requestAirdrop; weir_mintTo(owner, "usdc"|"usdt", amount))`,
  );
  logger.info(
    { event: 'devnet.running', chain: 'tron', ...tron },
    `local Tron running on ${tron.proxyUrl} (chain id 1416785484, test environment only; serve --devnet FILE offers it): test USDT ${tron.usdt}, test USDC ${tron.usdc}; its node (payments, no fee) ${tron.nodeUrl}`,
  );
}
