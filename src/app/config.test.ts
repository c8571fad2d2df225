import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { readmeSection, tableRows } from '../../test/support/readme.ts';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import test, { type ExecutionContext } from 'ava';
import { DEFAULT_RATE_LIMITS, RATE_LIMITS_OFF } from '../read-api/rate-limits.ts';
import { ConfigError, localChainsOf, rateLimitsOf, readConfig, SETTINGS, type SettingSpec } from './config.ts';

test('WEIR_CHAIN_WAIT_MAX: how long an expiry or reminder waits for a chain follower, in seconds; an hour unless set; the flag wins', (t) => {
  t.is(readConfig([], {}).chainWaitMaxSeconds, 3600);
  t.is(readConfig([], { WEIR_CHAIN_WAIT_MAX: '' }).chainWaitMaxSeconds, 3600, 'empty is unset');
  t.is(readConfig([], { WEIR_CHAIN_WAIT_MAX: '600' }).chainWaitMaxSeconds, 600);
  t.is(readConfig([], { WEIR_CHAIN_WAIT_MAX: '0' }).chainWaitMaxSeconds, 0, '0: no waiting past the time');
  t.is(readConfig(['--chain-wait-max', '900'], { WEIR_CHAIN_WAIT_MAX: '600' }).chainWaitMaxSeconds, 900);
  t.is(readConfig(['--chain-wait-max=120'], {}).chainWaitMaxSeconds, 120);
});

test('a bad WEIR_CHAIN_WAIT_MAX is refused with an error naming the setting', (t) => {
  for (const value of ['1h', '-5', '1.5', 'abc', '3600 ', '99999999999']) {
    const error = t.throws(() => readConfig([], { WEIR_CHAIN_WAIT_MAX: value }), { instanceOf: ConfigError }, value);
    t.regex(error.message, /^WEIR_CHAIN_WAIT_MAX \(--chain-wait-max\) must be a whole number of seconds, got /);
    t.true(error.message.endsWith(value), error.message);
  }
  t.throws(() => readConfig(['--chain-wait-max', 'soon'], {}), {
    instanceOf: ConfigError,
    message: /WEIR_CHAIN_WAIT_MAX.*got soon$/,
  });
  t.throws(() => readConfig(['--chain-wait-max'], {}), {
    instanceOf: ConfigError,
    message: '--chain-wait-max needs a value',
  });
});

test('WEIR_SWEEP_RECEIPT_TIMEOUT: seconds a sweep waits for its receipt, unset unless given (each rail its own); the flag wins; a bad value is refused naming the setting', (t) => {
  t.is(readConfig([], {}).sweepReceiptTimeoutSeconds, undefined);
  t.is(readConfig([], { WEIR_SWEEP_RECEIPT_TIMEOUT: '' }).sweepReceiptTimeoutSeconds, undefined, 'empty is unset');
  t.is(readConfig([], { WEIR_SWEEP_RECEIPT_TIMEOUT: '600' }).sweepReceiptTimeoutSeconds, 600);
  t.is(
    readConfig(['--sweep-receipt-timeout', '30'], { WEIR_SWEEP_RECEIPT_TIMEOUT: '600' }).sweepReceiptTimeoutSeconds,
    30,
  );
  for (const value of ['0', '3m', '-5', '1.5', '601', '1000000']) {
    const error = t.throws(() => readConfig([], { WEIR_SWEEP_RECEIPT_TIMEOUT: value }), { instanceOf: ConfigError });
    t.regex(error.message, /^WEIR_SWEEP_RECEIPT_TIMEOUT \(--sweep-receipt-timeout\) must be a whole number of seconds/);
    t.true(error.message.endsWith(value), error.message);
  }
});

test('WEIR_EVENT_STORE_FILE names a shared SQLite log outside the data dir; WEIR_LEASE_TTL is 5 s unless set, and refused below half a second', (t) => {
  t.is(readConfig([], {}).eventStoreFile, undefined);
  t.is(
    readConfig([], { WEIR_EVENT_STORE_FILE: '/srv/weir/events.sqlite3' }).eventStoreFile,
    '/srv/weir/events.sqlite3',
  );
  t.is(
    readConfig(['--event-store-file', 'shared/log.sqlite3'], {}).eventStoreFile,
    join(process.cwd(), 'shared/log.sqlite3'),
  );
  t.is(readConfig([], {}).leaseTtlSeconds, 5);
  t.is(readConfig(['--lease-ttl', '1.5'], {}).leaseTtlSeconds, 1.5);
  for (const value of ['0', '0.1', 'soon', '-3'])
    t.throws(() => readConfig([], { WEIR_LEASE_TTL: value }), {
      instanceOf: ConfigError,
      message: /^WEIR_LEASE_TTL \(--lease-ttl\)/,
    });
});

const secretFile = (t: ExecutionContext, content: string, mode = 0o600): string => {
  const dir = mkdtempSync(join(tmpdir(), 'weir-config-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'secret');
  writeFileSync(file, content, { mode });
  return file;
};
const MASTER_KEY = Buffer.alloc(32, 7).toString('base64');
/** An admin token of the least length taken (MIN_ADMIN_TOKEN_LENGTH). */
const TOKEN = 'op-token-0123456789abcdef-012345';

test('--admin-token-file / WEIR_ADMIN_TOKEN_FILE and --master-key-file / WEIR_MASTER_KEY_FILE: the secret is read from the file, its trailing newline trimmed', (t) => {
  const token = secretFile(t, `${TOKEN}\n`);
  const key = secretFile(t, `${MASTER_KEY}\r\n`);
  t.like(readConfig(['--admin-token-file', token, `--master-key-file=${key}`], {}), {
    adminToken: TOKEN,
    masterKey: MASTER_KEY,
  });
  t.like(readConfig([], { WEIR_ADMIN_TOKEN_FILE: token, WEIR_MASTER_KEY_FILE: key }), {
    adminToken: TOKEN,
    masterKey: MASTER_KEY,
  });
  t.like(
    readConfig([], { WEIR_ADMIN_TOKEN: TOKEN, WEIR_ADMIN_TOKEN_FILE: '' }),
    { adminToken: TOKEN },
    'empty is unset',
  );
  t.like(readConfig([], { WEIR_MASTER_KEY: MASTER_KEY }), { masterKey: MASTER_KEY });
});

test('an admin token shorter than 32 characters is refused, naming the setting that gave it and the minimum, never the token; unset, the admin API is off and nothing is asked', (t) => {
  const short = TOKEN.slice(1);
  const expected = (setting: string) =>
    `${setting}: the admin token must be at least 32 characters, got 31 (make one with openssl rand -hex 32; leave it unset to keep the admin API off)`;
  for (const [argv, env] of [
    [['--admin-token', short], {}],
    [[`--admin-token=${short}`], {}],
    [[], { WEIR_ADMIN_TOKEN: short }],
  ] as const) {
    const error = t.throws(() => readConfig([...argv], env), { instanceOf: ConfigError });
    t.is(error.message, expected('WEIR_ADMIN_TOKEN (--admin-token)'));
  }
  const file = secretFile(t, `${short}\n`);
  t.throws(() => readConfig(['--admin-token-file', file], {}), {
    instanceOf: ConfigError,
    message: expected('WEIR_ADMIN_TOKEN_FILE (--admin-token-file)'),
  });
  t.is(readConfig([], { WEIR_ADMIN_TOKEN: TOKEN }).adminToken, TOKEN, '32 characters are enough');
  t.is(readConfig([], {}).adminToken, undefined);
  t.is(readConfig([], { WEIR_ADMIN_TOKEN: '' }).adminToken, undefined, 'empty is unset');
});

test('the config says where the admin token came from: the inspector shows a terminal one from the command line or a file only', (t) => {
  const token = secretFile(t, `${TOKEN}\n`);
  t.is(readConfig(['--admin-token-file', token], {}).adminTokenFrom, 'file');
  t.is(readConfig([], { WEIR_ADMIN_TOKEN_FILE: token }).adminTokenFrom, 'file');
  t.is(readConfig(['--admin-token', TOKEN], { WEIR_ADMIN_TOKEN: `env-${TOKEN}` }).adminTokenFrom, 'argument');
  t.is(readConfig([], { WEIR_ADMIN_TOKEN: TOKEN }).adminTokenFrom, 'environment');
  t.is(readConfig([], {}).adminTokenFrom, undefined);
});

test('a secret given both as it is and as a file is a config error naming both settings', (t) => {
  const token = secretFile(t, 'from-file');
  for (const [argv, env] of [
    [['--admin-token', 'on-the-line', '--admin-token-file', token], {}],
    [[], { WEIR_ADMIN_TOKEN: 'in-env', WEIR_ADMIN_TOKEN_FILE: token }],
    [['--admin-token-file', token], { WEIR_ADMIN_TOKEN: 'in-env' }],
  ] as const) {
    const error = t.throws(() => readConfig([...argv], env), { instanceOf: ConfigError });
    t.is(
      error.message,
      'WEIR_ADMIN_TOKEN (--admin-token) and WEIR_ADMIN_TOKEN_FILE (--admin-token-file) are both set; give the admin token once',
    );
  }
  const key = secretFile(t, MASTER_KEY);
  t.throws(() => readConfig(['--master-key-file', key], { WEIR_MASTER_KEY: MASTER_KEY }), {
    instanceOf: ConfigError,
    message:
      'WEIR_MASTER_KEY (--master-key) and WEIR_MASTER_KEY_FILE (--master-key-file) are both set; give the master key once',
  });
});

test('a secret file that is missing, unreadable, empty or holds a bad key is a config error naming the setting and never showing the secret', (t) => {
  const missing = join(tmpdir(), 'weir-no-such-dir', 'token');
  t.throws(() => readConfig(['--admin-token-file', missing], {}), {
    instanceOf: ConfigError,
    message: `WEIR_ADMIN_TOKEN_FILE (--admin-token-file): cannot read ${missing} (ENOENT)`,
  });
  const dir = dirname(secretFile(t, ''));
  t.throws(() => readConfig([], { WEIR_ADMIN_TOKEN_FILE: dir }), {
    instanceOf: ConfigError,
    message: `WEIR_ADMIN_TOKEN_FILE (--admin-token-file): cannot read ${dir} (EISDIR)`,
  });
  if (process.getuid?.() !== 0) {
    // root reads any file, so an unreadable file can only be tried as another user.
    const locked = secretFile(t, 'hidden-token', 0o000);
    t.throws(() => readConfig([], { WEIR_ADMIN_TOKEN_FILE: locked }), {
      instanceOf: ConfigError,
      message: `WEIR_ADMIN_TOKEN_FILE (--admin-token-file): cannot read ${locked} (EACCES)`,
    });
  }
  for (const content of ['', '\n', '\r\n\n']) {
    const empty = secretFile(t, content);
    t.throws(() => readConfig([], { WEIR_MASTER_KEY_FILE: empty }), {
      instanceOf: ConfigError,
      message: `WEIR_MASTER_KEY_FILE (--master-key-file): ${empty} is empty`,
    });
  }
  const wrongKey = secretFile(t, 'not-a-key-s3cr3t\n');
  const error = t.throws(() => readConfig(['--master-key-file', wrongKey], {}), { instanceOf: ConfigError });
  t.is(error.message, 'WEIR_MASTER_KEY_FILE (--master-key-file) must hold 32 bytes encoded in base64');
  t.false(error.message.includes('s3cr3t'));
  t.throws(() => readConfig([], { WEIR_MASTER_KEY: 'short-s3cr3t' }), {
    instanceOf: ConfigError,
    message: 'WEIR_MASTER_KEY (--master-key) must hold 32 bytes encoded in base64',
  });
});

test('WEIR_WEBHOOK_INTERNAL_TARGETS: test unless set; a list of environments or none; anything else is refused naming the setting', (t) => {
  t.deepEqual(readConfig([], {}).webhookInternalTargets, ['test']);
  t.deepEqual(readConfig([], { WEIR_WEBHOOK_INTERNAL_TARGETS: 'none' }).webhookInternalTargets, []);
  t.deepEqual(readConfig([], { WEIR_WEBHOOK_INTERNAL_TARGETS: 'test, live' }).webhookInternalTargets, ['test', 'live']);
  t.deepEqual(readConfig(['--webhook-internal-targets', 'live'], {}).webhookInternalTargets, ['live']);
  t.throws(() => readConfig([], { WEIR_WEBHOOK_INTERNAL_TARGETS: 'prod' }), {
    instanceOf: ConfigError,
    message: /WEIR_WEBHOOK_INTERNAL_TARGETS/,
  });
});

test('rate limits: each has its default unless set, RATE/UNIT:BURST or off; WEIR_RATE_LIMITS=off turns them all off', (t) => {
  t.deepEqual(rateLimitsOf(readConfig([], {})), DEFAULT_RATE_LIMITS);
  t.deepEqual(DEFAULT_RATE_LIMITS, {
    apiKey: { perSecond: 100, burst: 2000 },
    hosted: { perSecond: 50, burst: 1000 },
    hostedCreates: { perSecond: 1, burst: 60 },
    authFailures: { perSecond: 1, burst: 100 },
  });
  const set = readConfig(['--rate-limit-hosted-creates', '30/min:10', '--rate-limit-auth-failures=off'], {
    WEIR_RATE_LIMIT_API_KEY: '10/s:50',
    WEIR_RATE_LIMIT_HOSTED_CREATES: '1/s:1',
  });
  t.deepEqual(rateLimitsOf(set), {
    apiKey: { perSecond: 10, burst: 50 },
    hosted: DEFAULT_RATE_LIMITS.hosted,
    hostedCreates: { perSecond: 0.5, burst: 10 },
    authFailures: null,
  });
  t.deepEqual(
    rateLimitsOf(readConfig([], { WEIR_RATE_LIMITS: 'off', WEIR_RATE_LIMIT_API_KEY: '10/s:50' })),
    RATE_LIMITS_OFF,
  );
  t.deepEqual(rateLimitsOf(readConfig(['--rate-limits', 'on'], { WEIR_RATE_LIMITS: 'off' })), DEFAULT_RATE_LIMITS);
  t.throws(() => readConfig([], { WEIR_RATE_LIMITS: 'maybe' }), {
    instanceOf: ConfigError,
    message: 'WEIR_RATE_LIMITS (--rate-limits) must be on or off, got maybe',
  });
  t.throws(() => readConfig([], { WEIR_RATE_LIMIT_HOSTED: '100' }), {
    instanceOf: ConfigError,
    message: /^WEIR_RATE_LIMIT_HOSTED \(--rate-limit-hosted\): expected RATE\/UNIT:BURST .*, got 100$/,
  });
  t.throws(() => readConfig(['--rate-limit-api-key', '10/s:0'], {}), {
    instanceOf: ConfigError,
    message: /^WEIR_RATE_LIMIT_API_KEY \(--rate-limit-api-key\): the burst must be/,
  });
});

test('WEIR_WEBHOOK_TOKEN_HEADER: x-webhook-token is sent unless off (the spec sends it); the flag wins; anything else is refused', (t) => {
  t.true(readConfig([], {}).webhookTokenHeader);
  t.false(readConfig([], { WEIR_WEBHOOK_TOKEN_HEADER: 'off' }).webhookTokenHeader);
  t.false(readConfig(['--webhook-token-header', 'off'], {}).webhookTokenHeader);
  t.true(readConfig(['--webhook-token-header=on'], { WEIR_WEBHOOK_TOKEN_HEADER: 'off' }).webhookTokenHeader);
  t.throws(() => readConfig([], { WEIR_WEBHOOK_TOKEN_HEADER: 'hidden' }), {
    instanceOf: ConfigError,
    message: 'WEIR_WEBHOOK_TOKEN_HEADER (--webhook-token-header) must be on or off, got hidden',
  });
});

test('WEIR_TRUST_PROXY: off unless 1 (or the bare flag); anything else is refused', (t) => {
  t.false(readConfig([], {}).trustProxy);
  t.true(readConfig([], { WEIR_TRUST_PROXY: '1' }).trustProxy);
  t.true(readConfig(['--trust-proxy'], {}).trustProxy);
  t.false(readConfig(['--trust-proxy=0'], { WEIR_TRUST_PROXY: '1' }).trustProxy);
  t.throws(() => readConfig([], { WEIR_TRUST_PROXY: 'yes' }), { instanceOf: ConfigError, message: /WEIR_TRUST_PROXY/ });
});

test('--trust-proxy 0 and --log-pretty 0 turn them off: the word after a switch is its value, not a stray argument (it used to turn X-Forwarded-For trust on)', (t) => {
  t.false(readConfig(['--trust-proxy', '0'], {}).trustProxy);
  t.false(readConfig(['--trust-proxy', 'false'], { WEIR_TRUST_PROXY: '1' }).trustProxy);
  t.true(readConfig(['--trust-proxy', '1', '--port', '9000'], {}).trustProxy);
  t.like(readConfig(['--trust-proxy', '--port', '9000'], {}), { trustProxy: true, port: 9000 });
  t.false(readConfig(['--log-pretty', '0'], { WEIR_LOG_PRETTY: '1' }).logPretty);
});

test('WEIR_PUBLIC_URL must be an http(s) URL, else the hosted pages would get addresses no payer can open; the error names the setting', (t) => {
  t.is(readConfig([], { WEIR_PUBLIC_URL: 'https://pay.example.com' }).publicUrl, 'https://pay.example.com');
  for (const bad of ['pay.example.com', 'ftp://pay.example.com', 'http//x'])
    t.throws(() => readConfig([], { WEIR_PUBLIC_URL: bad }), {
      instanceOf: ConfigError,
      message: `WEIR_PUBLIC_URL (--public-url) must be an http:// or https:// URL, got ${bad}`,
    });
});

test('a WEIR_PUBLIC_URL refused is shown with its user and password masked', (t) => {
  for (const bad of ['ftp://u:secret@pay.example.com', 'http//u:secret@pay.example.com']) {
    const error = t.throws(() => readConfig([], { WEIR_PUBLIC_URL: bad }), { instanceOf: ConfigError });
    t.notRegex(error?.message ?? '', /secret/);
    t.regex(error?.message ?? '', /\*\*\*@pay\.example\.com$/);
  }
});

test('a WEIR_PUBLIC_URL holding a user or password is refused (every payer link is made from it), masked', (t) => {
  for (const bad of ['https://u:secret@pay.example.com', 'https://u@pay.example.com']) {
    const error = t.throws(() => readConfig([], { WEIR_PUBLIC_URL: bad }), { instanceOf: ConfigError });
    t.regex(error?.message ?? '', /must not hold a user or password/);
    t.notRegex(error?.message ?? '', /secret/);
  }
  t.is(readConfig([], { WEIR_PUBLIC_URL: 'https://pay.example.com' }).publicUrl, 'https://pay.example.com');
});

test('WEIR_SMTP_URL must be an smtp:// or smtps:// URL; the error names the setting and never shows the URL (its password)', (t) => {
  t.is(readConfig([], { WEIR_SMTP_URL: 'smtp://u:p@mail.example:587' }).smtpUrl, 'smtp://u:p@mail.example:587');
  for (const bad of ['mail.example:587', 'https://u:secret@mail.example'])
    t.throws(() => readConfig([], { WEIR_SMTP_URL: bad }), {
      instanceOf: ConfigError,
      message: 'WEIR_SMTP_URL (--smtp-url) must be an smtp:// or smtps:// URL (smtp://user:pass@host:587)',
    });
});

test('NATS_URL, MONGODB_URL and KURRENTDB_URL of the wrong form are refused naming the setting, never showing the value (a malformed NATS URL was tried again for ever, the others ended in a stack trace)', (t) => {
  t.like(
    readConfig([], {
      NATS_URL: 'nats://a:4222,nats://b:4222',
      MONGODB_URL: 'mongodb+srv://u:p@cluster.example/weir',
      KURRENTDB_URL: 'kurrentdb://u:p@db.example:2113?tls=true',
    }),
    { natsUrl: 'nats://a:4222,nats://b:4222' },
  );
  t.is(readConfig([], { NATS_URL: '127.0.0.1:4222' }).natsUrl, '127.0.0.1:4222');
  t.is(
    readConfig([], { KURRENTDB_URL: 'esdb://localhost:2113?tls=false' }).kurrentDbUrl,
    'esdb://localhost:2113?tls=false',
  );
  const refused = [
    ['NATS_URL', 'nats://user:s3cret@[bad', /^NATS_URL \(--nats-url\) must be NATS server URLs/],
    [
      'MONGODB_URL',
      'http://u:s3cret@mongo',
      /^MONGODB_URL \(--mongodb-url\) must be a mongodb:\/\/ or mongodb\+srv:\/\//,
    ],
    ['KURRENTDB_URL', 'u:s3cret@db:2113', /^KURRENTDB_URL \(--kurrentdb-url\) must be a kurrentdb:\/\//],
  ] as const;
  for (const [name, value, message] of refused) {
    const error = t.throws(() => readConfig([], { [name]: value }), { instanceOf: ConfigError, message });
    t.false(error?.message.includes('s3cret'), name);
  }
});

test('WEIR_LOCAL_CHAIN: on unless off (or 0/false); the flag wins; anything else is refused naming the setting; the test rail is no setting', (t) => {
  t.true(readConfig([], {}).localChain);
  t.false(readConfig([], { WEIR_LOCAL_CHAIN: 'off' }).localChain);
  t.false(readConfig([], { WEIR_LOCAL_CHAIN: '0' }).localChain);
  t.true(readConfig(['--local-chain', 'on'], { WEIR_LOCAL_CHAIN: 'off' }).localChain);
  t.false(readConfig(['--local-chain=off'], {}).localChain);
  t.throws(() => readConfig([], { WEIR_LOCAL_CHAIN: 'maybe' }), {
    instanceOf: ConfigError,
    message: 'WEIR_LOCAL_CHAIN (--local-chain) must be on, off or a comma list of evm, tron, solana, got maybe',
  });
  t.false(
    'testRail' in readConfig(['--test-rail'], { WEIR_TEST_RAIL: '1' }),
    'a page that can never be paid is not offered',
  );
});

test('WEIR_LOCAL_CHAIN: a comma list runs those families only (the flag wins); an unknown family is refused naming the setting and the allowed values', (t) => {
  t.deepEqual(readConfig([], { WEIR_LOCAL_CHAIN: 'evm' }).localChain, ['evm']);
  t.deepEqual(readConfig([], { WEIR_LOCAL_CHAIN: ' Tron , evm,tron' }).localChain, ['tron', 'evm']);
  t.deepEqual(readConfig(['--local-chain', 'solana'], { WEIR_LOCAL_CHAIN: 'off' }).localChain, ['solana']);
  t.deepEqual(readConfig(['--local-chain=evm,solana'], {}).localChain, ['evm', 'solana']);
  for (const value of ['evm,bitcoin', 'evm,', 'all'])
    t.throws(() => readConfig([], { WEIR_LOCAL_CHAIN: value }), {
      instanceOf: ConfigError,
      message: `WEIR_LOCAL_CHAIN (--local-chain) must be on, off or a comma list of evm, tron, solana, got ${value}`,
    });
  const chains = (config: Parameters<typeof localChainsOf>[0]) => [...localChainsOf(config)].sort();
  t.deepEqual(chains(readConfig([], {})), ['evm', 'solana', 'tron']);
  t.deepEqual(chains(readConfig([], { WEIR_LOCAL_CHAIN: 'tron' })), ['tron']);
  t.deepEqual(chains(readConfig([], { WEIR_LOCAL_CHAIN: 'off' })), []);
  t.deepEqual(chains({ localChain: ['evm'], devnetFile: 'devnet.json' }), [], 'a devnet file replaces them');
  t.deepEqual(chains({}), [], 'unset in code: none');
});

test('logs: info and JSON unless set; WEIR_LOG_LEVEL and --log-level name a pino level, --log-pretty alone turns pretty lines on', (t) => {
  t.like(readConfig([], {}), { logLevel: 'info', logPretty: false });
  t.like(readConfig([], { WEIR_LOG_LEVEL: 'warn', WEIR_LOG_PRETTY: '1' }), { logLevel: 'warn', logPretty: true });
  t.like(readConfig(['--log-level', 'DEBUG', '--log-pretty'], { WEIR_LOG_LEVEL: 'warn' }), {
    logLevel: 'debug',
    logPretty: true,
  });
  t.like(readConfig(['--log-pretty=0'], { WEIR_LOG_PRETTY: '1' }), { logPretty: false });
  t.throws(() => readConfig([], { WEIR_LOG_LEVEL: 'loud' }), {
    instanceOf: ConfigError,
    message: /^WEIR_LOG_LEVEL \(--log-level\) must be one of fatal, error, warn, info, debug, trace, silent, got loud$/,
  });
  t.throws(() => readConfig([], { WEIR_LOG_PRETTY: 'yes' }), { instanceOf: ConfigError, message: /WEIR_LOG_PRETTY/ });
});

test("the chain settings reach the rails, every family's: EVM, Solana's commitment, Tron's contracts, Solidity node and energy; others stay out", (t) => {
  const chainEnv = {
    WEIR_RPC_84532: 'https://base-sepolia.example',
    WEIR_FACTORY_84532: '0x0000000000000000000000000000000000000001',
    WEIR_CONFIRMATIONS_84532: '3',
    WEIR_COMMITMENT_1399811148: 'confirmed,finalized',
    WEIR_TRON_FACTORY_3448148188: 'TXYZopYRdj2D9XRtbG411XZZ3kM5VkAeBf',
    WEIR_TRON_FORWARDER_3448148188: 'TXYZopYRdj2D9XRtbG411XZZ3kM5VkAeBf',
    WEIR_TRON_SOLIDITY_RPC_3448148188: 'https://nile.example/solidity/jsonrpc',
    WEIR_TRON_ENERGY_SOURCE: 'staked',
    WEIR_NATIVE_PRICE_1_USDC: '3000',
  };
  t.deepEqual(readConfig([], { ...chainEnv, WEIR_ADMIN_TOKEN_X: 'no', WEIR_RPC_: 'no' }).chainEnv, chainEnv);
});

test("the README's Configuration table and the settings agree: every setting has its row with its flag and default, every row is a setting Weir reads", async (t) => {
  const rows = tableRows(readmeSection('### Configuration'), (line) => line.startsWith('| `'))
    .map((cells) => cells.map((cell) => cell.replaceAll('`', '')))
    .map(([, env, flag, fallback]) => ({ env: env!, flag: flag!, fallback: fallback! }));
  for (const spec of Object.values(SETTINGS) as SettingSpec[]) {
    const row = rows.find((r) => r.env === spec.env);
    if (!row) {
      t.fail(`${spec.env} has no row in the README`);
      continue;
    }
    t.is(row.flag, spec.flag, spec.env);
    if (spec.default !== undefined) t.true(row.fallback.startsWith(spec.default), `${spec.env}'s default`);
  }
  for (const row of rows.filter((r) => !(Object.values(SETTINGS) as SettingSpec[]).some((s) => s.env === r.env))) {
    // A per-chain setting: no flag, and the rails are given it.
    t.is(row.flag, '', row.env);
    const concrete = row.env.replace('<chainId>', '1').replace('<CURRENCY>', 'USDC');
    t.deepEqual(Object.keys(readConfig([], { [concrete]: 'x' }).chainEnv ?? {}), [concrete], row.env);
  }
});

test('PORT is digits only: 0x1f90, 1e3 and 80.0 are refused naming PORT and --port (an operator who typed the flag was told of a variable), where Number() took them', (t) => {
  for (const port of ['0x1f90', '1e3', '80.0', ' 80'])
    t.throws(() => readConfig([], { PORT: port }), {
      instanceOf: ConfigError,
      message: /^PORT \(--port\) must be a port number/,
    });
  t.throws(() => readConfig(['--port', 'abc'], {}), {
    instanceOf: ConfigError,
    message: 'PORT (--port) must be a port number, got abc',
  });
  t.is(readConfig([], { PORT: '8081' }).port, 8081);
  t.is(readConfig(['--port', '0'], {}).port, 0);
});
