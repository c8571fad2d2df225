import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Environment } from '../event-store/event-store.ts';
import { DEFAULT_RATE_LIMITS, RATE_LIMITS_OFF, type RateLimits } from '../read-api/rate-limits.ts';
import { inspectTargetProblem } from '../inspect/inspect-target.ts';
import { LOG_LEVELS, type LogLevel } from '../shared/logger.ts';
import { formatTokenBucketLimit, parseTokenBucketLimit, type TokenBucketLimit } from '../shared/token-buckets.ts';
import { SettingError } from '../shared/setting-error.ts';
import { maskUserinfo } from '../shared/mask-userinfo.ts';

/** Weir's configuration: every setting is an environment variable and also a command-line flag. */
export type WeirConfig = {
  port: number;
  host: string;
  dataDir: string;
  natsUrl?: string;
  kurrentDbUrl?: string;
  /** The embedded SQLite log's file when it is not `<dataDir>/events.sqlite3`: several instances share one (WAL). */
  eventStoreFile?: string;
  /** Seconds a work lease lasts unrenewed (with NATS): how soon another instance takes over work whose owner died. */
  leaseTtlSeconds?: number;
  mongoDbUrl?: string;
  /** Base URL payers use to reach the hosted pages; defaults to http://HOST:PORT. */
  publicUrl?: string;
  /** 32 bytes in base64 to seal webhook secrets (given, or read from `masterKeyFile`); defaults to a key file in the data dir. */
  masterKey?: string;
  /** The operator's ed25519 private key (PKCS#8 PEM) signing the log's checkpoints (given, or read from `auditKeyFile`); defaults to a key file in the data dir. */
  auditKey?: string;
  /** The setting that gave `auditKey`, so an auditor is told which key was trusted and whence: `WEIR_AUDIT_KEY`, `--audit-key`, or the file setting with its path. */
  auditKeyFrom?: string;
  /** Seconds between signed checkpoints of the log's hash chain (written when the log moved); 0: none. Default `DEFAULT_AUDIT_CHECKPOINT_SECONDS`. */
  auditCheckpointSeconds?: number;
  /** Operator token for `/admin` (creating organizations over HTTP) and `/metrics` beyond loopback (given, or read from `adminTokenFile`); unset: the admin API is off. */
  adminToken?: string;
  /** Which setting gave the admin token (the one its error names). */
  adminTokenFrom?: 'argument' | 'file' | 'environment';
  /** JSON written by `weir devnet`: offer that local chain in the test environment. */
  devnetFile?: string;
  /** JSON file with RPC endpoints per chain id (`{"rpc": {"1": ["https://…", "wss://…"]}}`); WEIR_RPC_<chainId> wins. */
  rpcConfigFile?: string;
  /** Private key (0x…) of the operator account that pays sweep gas; never a merchant key. */
  sweeperKey?: string;
  /** `WEIR_RPC_<chainId>`, `WEIR_FACTORY_<chainId>` and `WEIR_CONFIRMATIONS_<chainId>` variables. */
  chainEnv?: Record<string, string>;
  /** SMTP server for invoice mails (`smtp://user:pass@host:587`); unset: mails go to DATA_DIR/outbox. */
  smtpUrl?: string;
  /**
   * Run local chains in the data dir and offer them to test keys: `true` all of `LOCAL_CHAIN_FAMILIES`, a
   * list only those. `readConfig` turns all on unless WEIR_LOCAL_CHAIN=off; unset in code means off. `devnetFile` wins.
   */
  localChain?: boolean | readonly LocalChainFamily[];
  /**
   * Seconds an expiry or invoice reminder waits past its time for a chain follower that has not
   * read that far (endpoint down, far behind); then it goes ahead. Default `DEFAULT_CHAIN_WAIT_MAX_SECONDS`.
   */
  chainWaitMaxSeconds?: number;
  /**
   * Seconds a sweep waits for its receipt once sent; past it, it is looked up by its hash in later
   * rounds. Unset: each rail's own (180 s on EVM networks, 90 s on Tron).
   */
  sweepReceiptTimeoutSeconds?: number;
  /** Environments whose webhooks may go to loopback, private and link-local addresses (default: test only). */
  webhookInternalTargets?: Environment[];
  /**
   * false: deliveries leave out `x-webhook-token` (the endpoint's secret itself, which the spec sends
   * and a receiver logging its request headers would keep); the signatures still go. Default true.
   */
  webhookTokenHeader?: boolean;
  /** Behind a reverse proxy: the client address is the last one of `X-Forwarded-For` (rate limits count by it). */
  trustProxy?: boolean;
  /** false: every rate limit below is off (a proxy in front limits instead). Default true. */
  rateLimits?: boolean;
  /** Each limit: unset for its default (`DEFAULT_RATE_LIMITS`), null for off. */
  rateLimitApiKey?: TokenBucketLimit | null;
  rateLimitHosted?: TokenBucketLimit | null;
  rateLimitHostedCreates?: TokenBucketLimit | null;
  rateLimitAuthFailures?: TokenBucketLimit | null;
  /** Lowest level logged (default info). */
  logLevel?: LogLevel;
  /** Human-readable log lines instead of JSON. */
  logPretty?: boolean;
  /** Show every record's statechart moving live in the Stately inspector: a ws:// URL of an inspector server, or a port to start one on. */
  inspect?: string;
};

export const DEFAULT_CHAIN_WAIT_MAX_SECONDS = 3600;
/** The longest a sweep may wait for its receipt: a stop waits for it. */
export const MAX_SWEEP_RECEIPT_SECONDS = 600;
export const DEFAULT_AUDIT_CHECKPOINT_SECONDS = 3600;
/**
 * The shortest admin token taken: it opens every organization's creation and /metrics, so it must
 * not be guessable (a random one: `openssl rand -hex 32`). Unset, the admin API is off, as in development.
 */
export const MIN_ADMIN_TOKEN_LENGTH = 32;

export type SettingSpec = { env: string; flag: string; description: string; default?: string };

export const SETTINGS = {
  port: { env: 'PORT', flag: '--port', description: 'HTTP port', default: '8080' },
  host: { env: 'HOST', flag: '--host', description: 'HTTP bind address', default: '127.0.0.1' },
  dataDir: {
    env: 'WEIR_DATA_DIR',
    flag: '--data-dir',
    description: 'where the embedded stores and the master key live',
    default: './data',
  },
  natsUrl: { env: 'NATS_URL', flag: '--nats-url', description: 'NATS JetStream server; unset: in-process bus' },
  kurrentDbUrl: {
    env: 'KURRENTDB_URL',
    flag: '--kurrentdb-url',
    description: 'KurrentDB/EventStoreDB connection string; unset: SQLite in the data dir',
  },
  eventStoreFile: {
    env: 'WEIR_EVENT_STORE_FILE',
    flag: '--event-store-file',
    description: 'SQLite event store file shared by several instances (WAL); unset: DATA_DIR/events.sqlite3',
  },
  leaseTtlSeconds: {
    env: 'WEIR_LEASE_TTL',
    flag: '--lease-ttl',
    description: 'seconds before another instance takes over work whose owner stopped renewing (with NATS)',
    default: '5',
  },
  mongoDbUrl: {
    env: 'MONGODB_URL',
    flag: '--mongodb-url',
    description:
      'MongoDB connection string; unset: the embedded read store, DATA_DIR/read-models.sqlite3 (kept across starts)',
  },
  publicUrl: {
    env: 'WEIR_PUBLIC_URL',
    flag: '--public-url',
    description: 'base URL of the hosted pages',
    default: 'http://HOST:PORT',
  },
  masterKey: {
    env: 'WEIR_MASTER_KEY',
    flag: '--master-key',
    description: '32-byte base64 key sealing webhook secrets; unset: DATA_DIR/master.key',
  },
  masterKeyFile: {
    env: 'WEIR_MASTER_KEY_FILE',
    flag: '--master-key-file',
    description: 'file holding the master key (instead of --master-key, kept out of the process list)',
  },
  auditKey: {
    env: 'WEIR_AUDIT_KEY',
    flag: '--audit-key',
    description: "ed25519 private key (PKCS#8 PEM) signing the log's checkpoints; unset: DATA_DIR/audit-operator.key",
  },
  auditKeyFile: {
    env: 'WEIR_AUDIT_KEY_FILE',
    flag: '--audit-key-file',
    description: 'file holding the audit key (instead of --audit-key)',
  },
  auditCheckpointSeconds: {
    env: 'WEIR_AUDIT_CHECKPOINT_INTERVAL',
    flag: '--audit-checkpoint-interval',
    description: "seconds between signed checkpoints of the log's hash chain (when it moved); 0: none",
    default: String(DEFAULT_AUDIT_CHECKPOINT_SECONDS),
  },
  adminToken: {
    env: 'WEIR_ADMIN_TOKEN',
    flag: '--admin-token',
    description:
      'operator token (at least 32 characters) for POST /admin/organizations and, beyond loopback, GET /metrics; unset: admin API off',
  },
  adminTokenFile: {
    env: 'WEIR_ADMIN_TOKEN_FILE',
    flag: '--admin-token-file',
    description: 'file holding the admin token (instead of --admin-token, kept out of the process list)',
  },
  devnetFile: {
    env: 'WEIR_DEVNET_FILE',
    flag: '--devnet',
    description: 'devnet JSON from `weir devnet --out FILE`: offer that chain to test keys',
  },
  rpcConfigFile: {
    env: 'WEIR_RPC_CONFIG',
    flag: '--rpc-config',
    description: 'JSON file of RPC endpoints per chain id; WEIR_RPC_<chainId>=url,url wins',
  },
  sweeperKey: {
    env: 'WEIR_SWEEPER_KEY',
    flag: '--sweeper-key',
    description:
      'operator key paying sweep gas (0x…), the only one live networks sweep with; the devnet falls back to its own sweeper account',
  },
  smtpUrl: {
    env: 'WEIR_SMTP_URL',
    flag: '--smtp-url',
    description: 'SMTP server for mails (smtp://user:pass@host:587); unset: .eml files in DATA_DIR/outbox',
  },
  localChain: {
    env: 'WEIR_LOCAL_CHAIN',
    flag: '--local-chain',
    description:
      'on/off, or a comma list of evm, tron, solana (those only): run local chains for test keys: an EVM chain (anvil, chain id 31337, 127.0.0.1) with test USDC/USDT/DAI, its state in DATA_DIR/local-chain, a Tron (chain id 1416785484) with test USDT/USDC, its state in DATA_DIR/local-tron, and a Solana in memory (chain id 1399811148) with test USDC/USDT; ignored with --devnet',
    default: 'on',
  },
  chainWaitMaxSeconds: {
    env: 'WEIR_CHAIN_WAIT_MAX',
    flag: '--chain-wait-max',
    description:
      'seconds an expiry or invoice reminder waits for a chain follower behind it; then it goes ahead (a payment read later is late)',
    default: String(DEFAULT_CHAIN_WAIT_MAX_SECONDS),
  },
  sweepReceiptTimeoutSeconds: {
    env: 'WEIR_SWEEP_RECEIPT_TIMEOUT',
    flag: '--sweep-receipt-timeout',
    description:
      'seconds a sweep waits for its receipt once sent (at most 600); then it is looked up by its hash in later rounds. Unset: 180 on EVM networks, 90 on Tron',
  },
  webhookInternalTargets: {
    env: 'WEIR_WEBHOOK_INTERNAL_TARGETS',
    flag: '--webhook-internal-targets',
    description:
      'environments whose webhooks may reach loopback, private and link-local addresses: test, live, test,live or none',
    default: 'test',
  },
  webhookTokenHeader: {
    env: 'WEIR_WEBHOOK_TOKEN_HEADER',
    flag: '--webhook-token-header',
    description:
      "on/off: off leaves x-webhook-token (the endpoint's secret itself) out of every delivery; the signature headers still go",
    default: 'on',
  },
  trustProxy: {
    env: 'WEIR_TRUST_PROXY',
    flag: '--trust-proxy',
    description: 'behind one reverse proxy: take the client address from the last X-Forwarded-For entry (1/0)',
    default: '0',
  },
  rateLimits: {
    env: 'WEIR_RATE_LIMITS',
    flag: '--rate-limits',
    description: 'on/off: off turns every rate limit below off',
    default: 'on',
  },
  rateLimitApiKey: {
    env: 'WEIR_RATE_LIMIT_API_KEY',
    flag: '--rate-limit-api-key',
    description: 'requests per API key under /api/v1, RATE/UNIT:BURST or off',
    default: formatTokenBucketLimit(DEFAULT_RATE_LIMITS.apiKey),
  },
  rateLimitHosted: {
    env: 'WEIR_RATE_LIMIT_HOSTED',
    flag: '--rate-limit-hosted',
    description: 'requests per client address to the hosted pages, RATE/UNIT:BURST or off',
    default: formatTokenBucketLimit(DEFAULT_RATE_LIMITS.hosted),
  },
  rateLimitHostedCreates: {
    env: 'WEIR_RATE_LIMIT_HOSTED_CREATES',
    flag: '--rate-limit-hosted-creates',
    description: 'hosted requests that create records (payment link form, invoice pay link) per client address',
    default: formatTokenBucketLimit(DEFAULT_RATE_LIMITS.hostedCreates),
  },
  rateLimitAuthFailures: {
    env: 'WEIR_RATE_LIMIT_AUTH_FAILURES',
    flag: '--rate-limit-auth-failures',
    description: 'failed authentications per client address; past them every request from it waits',
    default: formatTokenBucketLimit(DEFAULT_RATE_LIMITS.authFailures),
  },
  logLevel: {
    env: 'WEIR_LOG_LEVEL',
    flag: '--log-level',
    description: 'lowest level logged: fatal, error, warn, info, debug, trace or silent',
    default: 'info',
  },
  logPretty: {
    env: 'WEIR_LOG_PRETTY',
    flag: '--log-pretty',
    description: 'human-readable log lines instead of JSON lines (1/0)',
    default: '0',
  },
  inspect: {
    env: 'WEIR_INSPECT',
    flag: '--inspect',
    description:
      "show sessions, invoices, subscriptions, payment links, coupons and webhook deliveries moving live in the Stately inspector: a port (starts the inspector's bridge page at http://localhost:PORT, on loopback, for a development machine; its sockets need the admin token, else the one in DATA_DIR/inspector-token, made at the first start; the page's address is printed at start) or the ws:// URL of a running inspector server; unset: off",
  },
  // adminTokenFrom and auditKeyFrom are no settings: readConfig notes which of the secret's settings gave it.
} as const satisfies Record<
  Exclude<keyof WeirConfig, 'chainEnv' | 'adminTokenFrom' | 'auditKeyFrom'> | SecretFileSetting,
  SettingSpec
>;

/** Settings that name a file holding a secret, so the secret is in neither the process list nor the environment. */
type SecretFileSetting = 'masterKeyFile' | 'adminTokenFile' | 'auditKeyFile';
type SecretSetting = 'masterKey' | 'adminToken' | 'auditKey';

export class ConfigError extends SettingError {
  override readonly name = 'ConfigError';
}

/** `WEIR_ADMIN_TOKEN (--admin-token)`: how an error names a setting. */
const settingName = (key: keyof typeof SETTINGS): string => `${SETTINGS[key].env} (${SETTINGS[key].flag})`;
const SECRET_NAMES: Record<SecretSetting, string> = {
  masterKey: 'master key',
  adminToken: 'admin token',
  auditKey: 'audit key',
};

const SETTING_FLAGS: ReadonlySet<string> = new Set(Object.values(SETTINGS).map((s) => s.flag));
/** Settings whose flag alone turns them on; a 0/1/true/false after it is its value, so `--trust-proxy 0` is off. */
const SWITCH_FLAGS: ReadonlySet<string> = new Set(['--trust-proxy', '--log-pretty']);

/** Whether `name` (`--port`) is a setting's flag. */
export const isSettingFlag = (name: string): boolean => SETTING_FLAGS.has(name);

/** How many arguments from `argv[i]`, a setting's flag, belong to it: the flag alone (1) or with its value (2). */
export function settingArgumentCount(argv: readonly string[], i: number): 1 | 2 {
  const arg = argv[i]!;
  if (arg.includes('=')) return 1;
  if (!SWITCH_FLAGS.has(arg)) return 2;
  return /^(0|1|true|false)$/i.test(argv[i + 1] ?? '') ? 2 : 1;
}

/** Flags win over environment variables, which win over defaults. */
/** The per-chain settings the rails read (every family's: EVM, Solana's commitment, Tron's contracts, Solidity node and energy). */
const CHAIN_SETTING =
  /^WEIR_(RPC|FACTORY|CONFIRMATIONS|COMMITMENT|TRON_FACTORY|TRON_FORWARDER|TRON_SOLIDITY_RPC)_\d+$|^WEIR_NATIVE_PRICE_\d+_[A-Z0-9.]+$|^WEIR_TRON_ENERGY_[A-Z_]+$|^WEIR_TRON_MAX_FEE_LIMIT_SUN$/;

export function readConfig(argv: string[], env: NodeJS.ProcessEnv): WeirConfig {
  const flags = new Map<string, string>();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (!arg.startsWith('--')) continue;
    const [name, inline] = arg.split('=', 2) as [string, string | undefined];
    if (!SETTING_FLAGS.has(name)) continue;
    const count = settingArgumentCount(argv, i);
    const value = inline ?? (count === 2 ? argv[i + 1] : '1');
    if (value === undefined) throw new ConfigError(`${name} needs a value`);
    flags.set(name, value);
    i += count - 1;
  }
  const get = (key: keyof typeof SETTINGS): string | undefined => {
    const spec: SettingSpec = SETTINGS[key];
    const value = flags.get(spec.flag) ?? env[spec.env];
    return value === undefined || value === '' ? undefined : value;
  };
  /** A secret given as it is, or as a file holding it (never both); errors name the setting, never the secret. */
  const secret = (key: SecretSetting, fileKey: SecretFileSetting): string | undefined => {
    const given = get(key);
    const file = get(fileKey);
    if (file === undefined) return given;
    const name = settingName(fileKey);
    if (given !== undefined)
      throw new ConfigError(`${settingName(key)} and ${name} are both set; give the ${SECRET_NAMES[key]} once`);
    let text: string;
    try {
      text = readFileSync(resolve(file), 'utf8');
    } catch (error) {
      const reason = (error as NodeJS.ErrnoException).code ?? 'unreadable';
      throw new ConfigError(`${name}: cannot read ${resolve(file)} (${reason})`);
    }
    const value = text.replace(/(?:\r?\n)+$/, '');
    if (value === '') throw new ConfigError(`${name}: ${resolve(file)} is empty`);
    return value;
  };
  const adminToken = secret('adminToken', 'adminTokenFile');
  const adminTokenFrom =
    adminToken === undefined
      ? undefined
      : get('adminTokenFile') !== undefined
        ? 'file'
        : flags.has(SETTINGS.adminToken.flag)
          ? 'argument'
          : 'environment';
  if (adminToken !== undefined && adminToken.length < MIN_ADMIN_TOKEN_LENGTH)
    throw new ConfigError(
      `${settingName(adminTokenFrom === 'file' ? 'adminTokenFile' : 'adminToken')}: the admin token must be at least ${MIN_ADMIN_TOKEN_LENGTH} characters, got ${adminToken.length} (make one with openssl rand -hex 32; leave it unset to keep the admin API off)`,
    );
  const masterKey = secret('masterKey', 'masterKeyFile');
  const auditKey = secret('auditKey', 'auditKeyFile');
  /** The flag or variable that gave a setting (flags win, as `get` reads them). */
  const givenBy = (key: keyof typeof SETTINGS): string =>
    flags.get(SETTINGS[key].flag) ? SETTINGS[key].flag : SETTINGS[key].env;
  const auditKeyFile = get('auditKeyFile');
  const auditKeyFrom =
    auditKey === undefined
      ? undefined
      : auditKeyFile === undefined
        ? givenBy('auditKey')
        : `${givenBy('auditKeyFile')} ${resolve(auditKeyFile)}`;
  const auditIntervalText = get('auditCheckpointSeconds') ?? String(DEFAULT_AUDIT_CHECKPOINT_SECONDS);
  if (!/^\d{1,9}$/.test(auditIntervalText))
    throw new ConfigError(
      `${settingName('auditCheckpointSeconds')} must be a whole number of seconds, got ${auditIntervalText}`,
    );
  if (masterKey !== undefined && Buffer.from(masterKey, 'base64').length !== 32)
    throw new ConfigError(
      `${get('masterKeyFile') === undefined ? settingName('masterKey') : settingName('masterKeyFile')} must hold 32 bytes encoded in base64`,
    );
  const portText = get('port') ?? '8080';
  // Digits only: Number() would take 0x1f90, 1e3 or ' 80 ' as a port.
  const port = /^\d{1,5}$/.test(portText) ? Number(portText) : Number.NaN;
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new ConfigError(`${settingName('port')} must be a port number, got ${portText}`);
  const chainWaitText = get('chainWaitMaxSeconds') ?? String(DEFAULT_CHAIN_WAIT_MAX_SECONDS);
  if (!/^\d{1,9}$/.test(chainWaitText))
    throw new ConfigError(
      `WEIR_CHAIN_WAIT_MAX (--chain-wait-max) must be a whole number of seconds, got ${chainWaitText}`,
    );
  const sweepReceiptTimeoutText = get('sweepReceiptTimeoutSeconds');
  // At most 10 minutes: a stop waits for a sweep's receipt, and a later round looks a slow one up anyway.
  if (
    sweepReceiptTimeoutText !== undefined &&
    (!/^[1-9]\d{0,3}$/.test(sweepReceiptTimeoutText) || Number(sweepReceiptTimeoutText) > MAX_SWEEP_RECEIPT_SECONDS)
  )
    throw new ConfigError(
      `WEIR_SWEEP_RECEIPT_TIMEOUT (--sweep-receipt-timeout) must be a whole number of seconds from 1 to ${MAX_SWEEP_RECEIPT_SECONDS}, got ${sweepReceiptTimeoutText}`,
    );
  const leaseTtlText = get('leaseTtlSeconds') ?? '5';
  if (!/^\d{1,4}(\.\d{1,3})?$/.test(leaseTtlText) || Number(leaseTtlText) < 0.5)
    throw new ConfigError(
      `${settingName('leaseTtlSeconds')} must be a number of seconds, at least 0.5, got ${leaseTtlText}`,
    );
  const publicUrl = get('publicUrl');
  if (publicUrl !== undefined && !/^https?:$/.test(URL.parse(publicUrl)?.protocol ?? ''))
    throw new ConfigError(
      `${settingName('publicUrl')} must be an http:// or https:// URL, got ${maskUserinfo(publicUrl)}`,
    );
  // It is written into every payer's link and page: a user or password there would be handed to payers.
  const publicParts = publicUrl === undefined ? null : URL.parse(publicUrl);
  if (publicParts && (publicParts.username !== '' || publicParts.password !== ''))
    throw new ConfigError(
      `${settingName('publicUrl')} must not hold a user or password (payers' links are made from it), got ${maskUserinfo(publicUrl ?? '')}`,
    );
  // Service URLs carry credentials: an error names the setting and the form it takes, never the value.
  const natsUrl = get('natsUrl');
  const natsEntry = (entry: string) =>
    entry.includes('://')
      ? /^(nats|tls|ws|wss):$/.test(URL.parse(entry)?.protocol ?? '')
      : URL.parse(`nats://${entry}`) !== null;
  if (natsUrl !== undefined && !natsUrl.split(',').every((entry) => natsEntry(entry.trim())))
    throw new ConfigError(`${settingName('natsUrl')} must be NATS server URLs, comma-separated (nats://host:4222)`);
  const mongoDbUrl = get('mongoDbUrl');
  if (mongoDbUrl !== undefined && !/^mongodb(\+srv)?:\/\/./.test(mongoDbUrl))
    throw new ConfigError(`${settingName('mongoDbUrl')} must be a mongodb:// or mongodb+srv:// connection string`);
  const kurrentDbUrl = get('kurrentDbUrl');
  if (kurrentDbUrl !== undefined && !/^(kurrentdb|kurrent|kdb|esdb)(\+discover)?:\/\/./.test(kurrentDbUrl))
    throw new ConfigError(
      `${settingName('kurrentDbUrl')} must be a kurrentdb:// (or kurrentdb+discover://) connection string`,
    );
  const smtpUrl = get('smtpUrl');
  // Never shown: the URL carries the server's password.
  if (smtpUrl !== undefined && !/^smtps?:$/.test(URL.parse(smtpUrl)?.protocol ?? ''))
    throw new ConfigError(`${settingName('smtpUrl')} must be an smtp:// or smtps:// URL (smtp://user:pass@host:587)`);
  const eventStoreFile = get('eventStoreFile');
  const internalTargetsText = get('webhookInternalTargets') ?? 'test';
  const webhookInternalTargets =
    internalTargetsText === 'none' ? [] : [...new Set(internalTargetsText.split(',').map((e) => e.trim()))];
  if (!webhookInternalTargets.every((e): e is Environment => e === 'test' || e === 'live'))
    throw new ConfigError(
      `${settingName('webhookInternalTargets')} must be test, live, test,live or none, got ${internalTargetsText}`,
    );
  const inspect = get('inspect');
  const inspectProblem = inspect === undefined ? null : inspectTargetProblem(inspect);
  if (inspectProblem) throw new ConfigError(`${settingName('inspect')}: ${inspectProblem}, got ${inspect}`);
  const logLevel = (get('logLevel') ?? 'info').toLowerCase();
  if (!LOG_LEVELS.some((level) => level === logLevel))
    throw new ConfigError(`${settingName('logLevel')} must be one of ${LOG_LEVELS.join(', ')}, got ${logLevel}`);
  const flag = (
    key: 'trustProxy' | 'rateLimits' | 'logPretty' | 'webhookTokenHeader',
    fallback: string,
    on: string,
    off: string,
  ): boolean => {
    const value = (get(key) ?? fallback).toLowerCase();
    if (value === on || value === '1' || value === 'true') return true;
    if (value === off || value === '0' || value === 'false') return false;
    throw new ConfigError(`${settingName(key)} must be ${on} or ${off}, got ${value}`);
  };
  const limit = (
    key: 'rateLimitApiKey' | 'rateLimitHosted' | 'rateLimitHostedCreates' | 'rateLimitAuthFailures',
  ): TokenBucketLimit | null | undefined => {
    const text = get(key);
    if (text === undefined) return undefined;
    try {
      return parseTokenBucketLimit(text);
    } catch (error) {
      throw new ConfigError(`${settingName(key)}: ${(error as Error).message}, got ${text}`);
    }
  };
  return {
    port,
    host: get('host') ?? '127.0.0.1',
    dataDir: resolve(get('dataDir') ?? './data'),
    natsUrl,
    kurrentDbUrl,
    ...(eventStoreFile ? { eventStoreFile: resolve(eventStoreFile) } : {}),
    leaseTtlSeconds: Number(leaseTtlText),
    mongoDbUrl,
    publicUrl,
    masterKey,
    auditKey,
    ...(auditKeyFrom ? { auditKeyFrom } : {}),
    auditCheckpointSeconds: Number(auditIntervalText),
    adminToken,
    ...(adminTokenFrom ? { adminTokenFrom } : {}),
    devnetFile: get('devnetFile'),
    rpcConfigFile: get('rpcConfigFile'),
    sweeperKey: get('sweeperKey'),
    smtpUrl,
    localChain: localChainOf(get('localChain')),
    chainWaitMaxSeconds: Number(chainWaitText),
    ...(sweepReceiptTimeoutText === undefined ? {} : { sweepReceiptTimeoutSeconds: Number(sweepReceiptTimeoutText) }),
    webhookInternalTargets,
    webhookTokenHeader: flag('webhookTokenHeader', 'on', 'on', 'off'),
    trustProxy: flag('trustProxy', '0', '1', '0'),
    rateLimits: flag('rateLimits', 'on', 'on', 'off'),
    rateLimitApiKey: limit('rateLimitApiKey'),
    rateLimitHosted: limit('rateLimitHosted'),
    rateLimitHostedCreates: limit('rateLimitHostedCreates'),
    rateLimitAuthFailures: limit('rateLimitAuthFailures'),
    logLevel: logLevel as LogLevel,
    logPretty: flag('logPretty', '0', '1', '0'),
    inspect,
    chainEnv: Object.fromEntries(
      Object.entries(env).filter((e): e is [string, string] => CHAIN_SETTING.test(e[0]) && !!e[1]),
    ),
  };
}

/** The families of local chain `weir serve` can run (WEIR_LOCAL_CHAIN lists some of them). */
export const LOCAL_CHAIN_FAMILIES = ['evm', 'tron', 'solana'] as const;
export type LocalChainFamily = (typeof LOCAL_CHAIN_FAMILIES)[number];

/** WEIR_LOCAL_CHAIN: on (or 1/true, the default) all, off (0/false) none, or a comma list of families. */
function localChainOf(text: string | undefined): boolean | LocalChainFamily[] {
  const value = (text ?? 'on').toLowerCase();
  if (value === 'on' || value === '1' || value === 'true') return true;
  if (value === 'off' || value === '0' || value === 'false') return false;
  const listed = [...new Set(value.split(',').map((e) => e.trim()))];
  if (!listed.every((e): e is LocalChainFamily => (LOCAL_CHAIN_FAMILIES as readonly string[]).includes(e)))
    throw new ConfigError(
      `${settingName('localChain')} must be on, off or a comma list of ${LOCAL_CHAIN_FAMILIES.join(', ')}, got ${value}`,
    );
  return listed;
}

/** The local chains the settings run: none without `localChain` or with a devnet file (which replaces them). */
export function localChainsOf(config: Pick<WeirConfig, 'localChain' | 'devnetFile'>): ReadonlySet<LocalChainFamily> {
  if (!config.localChain || config.devnetFile) return new Set();
  return new Set(config.localChain === true ? LOCAL_CHAIN_FAMILIES : config.localChain);
}

/** The rate limits the settings ask for: each its default unless set, all off with `rateLimits: false`. */
export function rateLimitsOf(config: WeirConfig): RateLimits {
  if (config.rateLimits === false) return RATE_LIMITS_OFF;
  const or = <T>(value: T | undefined, fallback: T): T => (value === undefined ? fallback : value);
  return {
    apiKey: or(config.rateLimitApiKey, DEFAULT_RATE_LIMITS.apiKey),
    hosted: or(config.rateLimitHosted, DEFAULT_RATE_LIMITS.hosted),
    hostedCreates: or(config.rateLimitHostedCreates, DEFAULT_RATE_LIMITS.hostedCreates),
    authFailures: or(config.rateLimitAuthFailures, DEFAULT_RATE_LIMITS.authFailures),
  };
}
