import { constants } from 'node:fs';
import { access, readFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { getAddress, isAddress, type Address, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { makeDirectory } from '../../../shared/make-directory.ts';
import { writeFileAtomically } from '../../../shared/write-file-atomically.ts';
import { DevnetInfoError } from './errors.ts';

export const devnetAccountRoles = ['deployer', 'sweeper', 'payer', 'merchant'] as const;

/**
 * What an account is for on the devnet: `deployer` deployed every contract, owns the test tokens
 * and funds the faucet; `sweeper` sends the sweeps; `payer` holds test funds to pay checkouts
 * with; `merchant` is a wallet to receive payments.
 */
export type DevnetAccountRole = (typeof devnetAccountRoles)[number];

export type DevnetAccount = {
  /** EIP-55 checksummed. */
  address: Address;
  /** Publicly known development key: never use it on a real network. */
  privateKey: Hex;
  role: DevnetAccountRole;
};

/** The contracts deployed on the devnet (EIP-55 checksummed addresses). */
export type DevnetContractAddresses = {
  forwarderFactory: Address;
  /** TestToken `USDC`, 6 decimals. */
  usdc: Address;
  /** TetherLikeToken `USDT`, 6 decimals, transfer returns nothing (like USDT on Ethereum). */
  usdt: Address;
  /** TestToken `DAI`, 18 decimals. */
  dai: Address;
};

/**
 * The local Tron `weir devnet` runs beside the chain: the Tron-flavoured JSON-RPC Weir reads, the
 * anvil behind it (chain id "TrnL") where payments and sweeps are sent, and its contracts (0x form,
 * deployed as on the chain, by the same accounts).
 */
export type DevnetTronInfo = { rpcUrl: string; sendUrl: string; contracts: DevnetContractAddresses };

/** The document `startDevnet` returns and writes: everything needed to use a running devnet. */
export type DevnetInfo = {
  chainId: number;
  /** `http://127.0.0.1:<port>` */
  rpcUrl: string;
  /** `ws://127.0.0.1:<port>` */
  wsUrl: string;
  contracts: DevnetContractAddresses;
  accounts: DevnetAccount[];
  /** ISO-8601 time the devnet was ready. */
  startedAt: string;
  /** The local Tron beside it, when one runs (`weir devnet`). */
  tron?: DevnetTronInfo;
};

const contractKeys = [
  'forwarderFactory',
  'usdc',
  'usdt',
  'dai',
] as const satisfies readonly (keyof DevnetContractAddresses)[];
const privateKeyPattern = /^0x[0-9a-fA-F]{64}$/;
const isoTimePattern = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:\d{2})$/;

/**
 * Checks that `value` is a {@link DevnetInfo} and returns it with addresses checksummed. Every
 * problem is listed in the {@link DevnetInfoError}, each naming its field. `source` names where
 * the value came from in that message (a file path, `stdin`, ...).
 */
export function parseDevnetInfo(value: unknown, source = 'document'): DevnetInfo {
  const problems: string[] = [];
  if (!isRecord(value)) throw new DevnetInfoError(source, [`expected a JSON object, got ${describe(value)}`]);

  const chainId = value['chainId'];
  if (typeof chainId !== 'number' || !Number.isSafeInteger(chainId) || chainId <= 0) {
    problems.push(`chainId must be a positive integer, got ${describe(chainId)}`);
  }
  const rpcUrl = checkUrl(value['rpcUrl'], 'rpcUrl', ['http:', 'https:'], problems);
  const wsUrl = checkUrl(value['wsUrl'], 'wsUrl', ['ws:', 'wss:'], problems);

  const contracts = checkContracts(value['contracts'], 'contracts', problems);
  const rawTron = value['tron'];
  let tron: DevnetTronInfo | undefined;
  if (rawTron !== undefined) {
    if (!isRecord(rawTron))
      problems.push(`tron must be an object with rpcUrl, sendUrl and contracts, got ${describe(rawTron)}`);
    else
      tron = {
        rpcUrl: checkUrl(rawTron['rpcUrl'], 'tron.rpcUrl', ['http:', 'https:'], problems) as string,
        sendUrl: checkUrl(rawTron['sendUrl'], 'tron.sendUrl', ['http:', 'https:'], problems) as string,
        contracts: checkContracts(rawTron['contracts'], 'tron.contracts', problems),
      };
  }

  const accounts: DevnetAccount[] = [];
  const rawAccounts = value['accounts'];
  if (!Array.isArray(rawAccounts) || rawAccounts.length === 0) {
    problems.push(`accounts must be a non-empty array, got ${describe(rawAccounts)}`);
  } else {
    rawAccounts.forEach((raw: unknown, index) => {
      const account = checkAccount(raw, `accounts[${index}]`, problems);
      if (account !== undefined) accounts.push(account);
    });
    if (accounts.length === rawAccounts.length && !accounts.some((account) => account.role === 'deployer')) {
      problems.push('accounts has no account with role "deployer" (the faucet and token owner)');
    }
  }

  const startedAt = value['startedAt'];
  if (typeof startedAt !== 'string' || !isoTimePattern.test(startedAt) || Number.isNaN(Date.parse(startedAt))) {
    problems.push(`startedAt must be an ISO-8601 time, got ${describe(startedAt)}`);
  }

  if (problems.length > 0) throw new DevnetInfoError(source, problems);
  return {
    chainId: chainId as number,
    rpcUrl: rpcUrl as string,
    wsUrl: wsUrl as string,
    contracts,
    accounts,
    startedAt: startedAt as string,
    ...(tron === undefined ? {} : { tron }),
  };
}

/** The four contract addresses under `field`, checksummed; what is wrong goes to `problems`. */
function checkContracts(raw: unknown, field: string, problems: string[]): DevnetContractAddresses {
  const contracts: Partial<Record<keyof DevnetContractAddresses, Address>> = {};
  if (!isRecord(raw)) {
    problems.push(`${field} must be an object with ${contractKeys.join(', ')}, got ${describe(raw)}`);
  } else {
    for (const key of contractKeys) {
      const address = checkAddress(raw[key], `${field}.${key}`, problems);
      if (address !== undefined) contracts[key] = address;
    }
  }
  return contracts as DevnetContractAddresses;
}

/** Reads and checks the devnet info file `startDevnet` wrote. Throws {@link DevnetInfoError}. */
export async function readDevnetInfo(file: string): Promise<DevnetInfo> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    const code = isRecord(error) ? error['code'] : undefined;
    throw new DevnetInfoError(file, [
      code === 'ENOENT' ? 'the file does not exist (is the devnet running?)' : `cannot read it: ${String(error)}`,
    ]);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new DevnetInfoError(file, [`it is not JSON: ${error instanceof Error ? error.message : String(error)}`]);
  }
  return parseDevnetInfo(value, file);
}

/**
 * Makes `file`'s folder if missing and checks it takes a new file, so `weir devnet --out` refuses an
 * unusable path (with the system error writeDevnetInfo would meet) before its chains start, not after.
 */
export async function prepareDevnetInfoFile(file: string): Promise<void> {
  const folder = dirname(file);
  await makeDirectory(folder);
  await access(folder, constants.W_OK);
}

/** Writes `info` to `file` as pretty JSON, atomically (a reader never sees half a file). */
export async function writeDevnetInfo(file: string, info: DevnetInfo): Promise<void> {
  // Readable by the tools that read it (not the private 0600 of the data dir's own files).
  await writeFileAtomically(file, `${JSON.stringify(info, null, 2)}\n`, { mode: 0o644 });
}

/** The first account with `role`; throws {@link DevnetInfoError} when there is none. */
export function devnetAccount(info: DevnetInfo, role: DevnetAccountRole): DevnetAccount {
  const account = info.accounts.find((candidate) => candidate.role === role);
  if (account === undefined) throw new DevnetInfoError('document', [`accounts has no account with role "${role}"`]);
  return account;
}

function checkAccount(raw: unknown, field: string, problems: string[]): DevnetAccount | undefined {
  if (!isRecord(raw)) {
    problems.push(`${field} must be an object with address, privateKey and role, got ${describe(raw)}`);
    return undefined;
  }
  const before = problems.length;
  const address = checkAddress(raw['address'], `${field}.address`, problems);
  const privateKey = raw['privateKey'];
  if (typeof privateKey !== 'string' || !privateKeyPattern.test(privateKey)) {
    problems.push(`${field}.privateKey must be 0x and 64 hex digits, got ${describe(privateKey)}`);
  }
  const role = raw['role'];
  if (!devnetAccountRoles.some((known) => known === role)) {
    problems.push(`${field}.role must be one of ${devnetAccountRoles.join(', ')}, got ${describe(role)}`);
  }
  if (problems.length > before || address === undefined) return undefined;
  const key = privateKey as Hex;
  const derived = privateKeyToAccount(key).address;
  if (derived !== address) {
    problems.push(`${field}.privateKey belongs to ${derived}, not to ${field}.address ${address}`);
    return undefined;
  }
  return { address, privateKey: key, role: role as DevnetAccountRole };
}

function checkAddress(raw: unknown, field: string, problems: string[]): Address | undefined {
  if (typeof raw !== 'string' || !isAddress(raw, { strict: false })) {
    problems.push(`${field} must be a 0x-prefixed 20-byte address, got ${describe(raw)}`);
    return undefined;
  }
  return getAddress(raw);
}

function checkUrl(raw: unknown, field: string, protocols: readonly string[], problems: string[]): string | undefined {
  if (typeof raw === 'string' && URL.canParse(raw) && protocols.includes(new URL(raw).protocol)) return raw;
  problems.push(
    `${field} must be a ${protocols.map((protocol) => `${protocol}//`).join(' or ')} URL, got ${describe(raw)}`,
  );
  return undefined;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function describe(value: unknown): string {
  if (value === undefined) return 'nothing';
  const text = JSON.stringify(value);
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}
