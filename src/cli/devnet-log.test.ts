import test from 'ava';
import { Writable } from 'node:stream';
import { ConfigError } from '../app/config.ts';
import { devnetLogger, logDevnetRunning } from './devnet-log.ts';

/** A destination keeping each line written (a stream: pino-pretty pipes into one). */
const captured = (): Writable & { lines: string[] } => {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer | string, _encoding, done) {
      lines.push(String(chunk));
      done();
    },
  });
  return Object.assign(stream, { lines });
};

const RUNNING = {
  evm: { rpcUrl: 'http://127.0.0.1:8545', out: '/tmp/devnet.json' },
  solana: { rpcUrl: 'http://127.0.0.1:8899', wsUrl: 'ws://127.0.0.1:8900', usdc: 'Usdc1', usdt: 'Usdt1', faucet: 'F1' },
  tron: { proxyUrl: 'http://127.0.0.1:9090', nodeUrl: 'http://127.0.0.1:9091', usdt: 'TUsdt', usdc: 'TUsdc' },
};

test('weir devnet logs its chains as serve logs: a pino JSON line each, with its event and addresses as fields', (t) => {
  const out = captured();
  logDevnetRunning(devnetLogger([], {}, out), RUNNING);
  const lines = out.lines.map((line) => JSON.parse(line) as Record<string, unknown>);
  t.deepEqual(
    lines.map((line) => [line['level'], line['event'], line['chain']]),
    [
      [30, 'devnet.running', 'evm'],
      [30, 'devnet.running', 'solana'],
      [30, 'devnet.running', 'tron'],
    ],
  );
  t.like(lines[0], { rpcUrl: RUNNING.evm.rpcUrl, out: RUNNING.evm.out });
  t.regex(
    String(lines[0]!['msg']),
    /^devnet running on http:\/\/127\.0\.0\.1:8545; details in \/tmp\/devnet\.json; Ctrl-C to stop$/,
  );
  t.like(lines[1], { wsUrl: RUNNING.solana.wsUrl, usdc: 'Usdc1', faucet: 'F1' });
  t.like(lines[2], { proxyUrl: RUNNING.tron.proxyUrl, nodeUrl: RUNNING.tron.nodeUrl, usdt: 'TUsdt' });
});

test("weir devnet's log level and pretty lines are serve's settings, read and checked as serve reads them", (t) => {
  t.is(devnetLogger(['--port', '8545', '--log-level', 'warn'], {}, captured()).level, 'warn');
  t.is(devnetLogger([], { WEIR_LOG_LEVEL: 'debug' }, captured()).level, 'debug');
  t.is(devnetLogger(['--log-level=error'], { WEIR_LOG_LEVEL: 'debug' }, captured()).level, 'error', 'the flag wins');
  // Other settings are serve's: one it could not use does not stop a devnet.
  t.is(devnetLogger([], { PORT: 'not a port', WEIR_MASTER_KEY_FILE: '/nowhere' }, captured()).level, 'info');
  t.throws(() => devnetLogger([], { WEIR_LOG_LEVEL: 'loud' }, captured()), {
    instanceOf: ConfigError,
    message: /^WEIR_LOG_LEVEL \(--log-level\) must be one of fatal, error, warn, info, debug, trace, silent, got loud$/,
  });
  const pretty = captured();
  devnetLogger(['--log-pretty'], {}, pretty).info({ event: 'devnet.running' }, 'devnet running');
  t.regex(pretty.lines.join(''), /devnet running/);
  t.throws(() => JSON.parse(pretty.lines.join('')), undefined, 'human-readable, not JSON');
});
