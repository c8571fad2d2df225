import { createHash } from 'node:crypto';
import { recoverAddress, toFunctionSelector, type Hex } from 'viem';
import { tronAddressBytes } from '../address.ts';
import {
  decodeTronTriggerRaw,
  encodeTronTriggerRaw,
  TRIGGER_SMART_CONTRACT,
  type TronTriggerRaw,
} from '../tron-raw-transaction.ts';
import { tronBandwidthOf } from '../tron-resources.ts';

/*
 * java-tron's transaction calls of the HTTP API, over anvil, for the local Tron (tronprotocol
 * documentation-en, "HTTP API": triggersmartcontract, broadcasttransaction, gettransactionbyid,
 * gettransactioninfobyid). Request and answer shapes are java-tron's; what is underneath is not:
 *  - `raw_data_hex` is the protobuf of `raw_data` (../tron-raw-transaction.ts, checked against
 *    tronweb's encoder), as java-tron's; Weir reads it back before signing txID = sha256(raw_data_hex).
 *  - a broadcast checks the signature recovers `owner_address` and the expiration, then runs the
 *    call on anvil as the owner (impersonated, gas price 0: its base fee is 0), with the gas limit
 *    the fee limit buys at the energy price; energy is anvil's gas.
 *  - fees: energy the account holds (weir_setAccountResource) is used first and the rest burnt at
 *    getEnergyFee; bandwidth (call data + 280 bytes, Weir's own estimate) from staked, then free,
 *    else burnt whole at getTransactionFee; what was used is counted as used on the account.
 */

/** What the proxy keeps of an account's resources (absent means 0); these calls consume them. */
export type ResourceBook = {
  get(key: string): {
    EnergyLimit?: number;
    EnergyUsed?: number;
    NetLimit?: number;
    NetUsed?: number;
    freeNetUsed?: number;
  };
  set(key: string, value: ReturnType<ResourceBook['get']>): void;
};

type RawData = {
  contract: {
    parameter: {
      value: { data: string; owner_address: string; contract_address: string; call_value?: number };
      type_url: string;
    };
    type: 'TriggerSmartContract';
  }[];
  ref_block_bytes: string;
  ref_block_hash: string;
  expiration: number;
  fee_limit: number;
  timestamp: number;
};

type Known = {
  transaction: { txID: string; raw_data: RawData; raw_data_hex: string; signature: string[]; visible: false };
  anvilHash: Hex;
  info: Record<string, unknown> | null;
};

/** java-tron's default transaction lifetime. */
const EXPIRATION_MS = 60_000;
const FREE_NET_LIMIT = 600;

const hexMessage = (text: string) => Buffer.from(text, 'utf8').toString('hex');
const sha256 = (hex: string) => createHash('sha256').update(Buffer.from(hex, 'hex')).digest('hex');
const numberOf = (value: unknown): number | null =>
  typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 ? value : null;

export function createWalletTransactions(deps: {
  upstreamResult: (method: string, params: unknown[]) => Promise<unknown>;
  resources: ResourceBook;
  prices: { energySun: number; bandwidthSun: number };
  now: () => number;
}) {
  const known = new Map<string, Known>();
  const { upstreamResult, prices } = deps;

  async function trigger(body: Record<string, unknown>) {
    const owner = body['owner_address'];
    const contract = body['contract_address'];
    const selector = body['function_selector'];
    const parameter = typeof body['parameter'] === 'string' ? body['parameter'] : '';
    const feeLimit = numberOf(body['fee_limit']);
    let ownerHex: string;
    let contractHex: string;
    try {
      ownerHex = `41${tronAddressBytes(String(owner)).slice(2)}`;
      contractHex = `41${tronAddressBytes(String(contract)).slice(2)}`;
    } catch {
      return { result: { code: 'OTHER_ERROR', message: hexMessage('Invalid address') } };
    }
    if (typeof selector !== 'string' || !/^(?:[0-9a-fA-F]{2})*$/.test(parameter) || feeLimit === null)
      return {
        result: {
          code: 'CONTRACT_VALIDATE_ERROR',
          message: hexMessage('invalid function_selector, parameter or fee_limit'),
        },
      };
    const block = (await upstreamResult('eth_getBlockByNumber', ['latest', false])) as { number: Hex; hash: Hex };
    const now = deps.now();
    const raw_data: RawData = {
      contract: [
        {
          parameter: {
            value: {
              data: `${toFunctionSelector(selector).slice(2)}${parameter.toLowerCase()}`,
              owner_address: ownerHex.toLowerCase(),
              contract_address: contractHex.toLowerCase(),
            },
            type_url: 'type.googleapis.com/protocol.TriggerSmartContract',
          },
          type: 'TriggerSmartContract',
        },
      ],
      // TAPoS: the last 2 bytes of the block number and bytes 8..16 of its hash, as java-tron fills them.
      ref_block_bytes: BigInt(block.number).toString(16).padStart(4, '0').slice(-4),
      ref_block_hash: block.hash.slice(18, 34),
      expiration: now + EXPIRATION_MS,
      fee_limit: feeLimit,
      timestamp: now,
    };
    const raw_data_hex = encodeTronTriggerRaw({
      refBlockBytes: raw_data.ref_block_bytes,
      refBlockHash: raw_data.ref_block_hash,
      expiration: BigInt(raw_data.expiration),
      timestamp: BigInt(raw_data.timestamp),
      feeLimit: BigInt(raw_data.fee_limit),
      contracts: [
        {
          type: TRIGGER_SMART_CONTRACT,
          owner: ownerHex,
          contract: contractHex,
          callValue: 0n,
          data: raw_data.contract[0]!.parameter.value.data,
        },
      ],
    });
    return {
      result: { result: true },
      transaction: { visible: false, txID: sha256(raw_data_hex), raw_data, raw_data_hex },
    };
  }

  async function broadcast(body: Record<string, unknown>) {
    const refuse = (code: string, message: string) => ({
      result: false,
      code,
      txid: body['txID'],
      message: hexMessage(message),
    });
    const txID = typeof body['txID'] === 'string' ? body['txID'].toLowerCase() : '';
    const rawHex = typeof body['raw_data_hex'] === 'string' ? body['raw_data_hex'] : '';
    const signature = Array.isArray(body['signature']) ? body['signature'] : [];
    if (!/^(?:[0-9a-fA-F]{2})+$/.test(rawHex) || sha256(rawHex) !== txID)
      return refuse('SIGERROR', 'txID is not the hash of raw_data');
    if (known.has(txID)) return refuse('DUP_TRANSACTION_ERROR', 'dup transaction');
    let decoded: TronTriggerRaw;
    try {
      decoded = decodeTronTriggerRaw(rawHex);
    } catch {
      return refuse('OTHER_ERROR', 'raw_data_hex is not a transaction');
    }
    if (decoded.expiration <= BigInt(deps.now()))
      return refuse(
        'TRANSACTION_EXPIRATION_ERROR',
        `Transaction expiration, transaction expiration time is ${decoded.expiration}`,
      );
    const triggered = decoded.contracts[0];
    if (decoded.contracts.length !== 1 || triggered?.type !== TRIGGER_SMART_CONTRACT)
      return refuse('CONTRACT_VALIDATE_ERROR', 'only one TriggerSmartContract is served here');
    const call = { owner_address: triggered.owner, contract_address: triggered.contract, data: triggered.data };
    // The JSON form beside the bytes, as java-tron gives it back (gettransactionbyid).
    const raw: RawData = {
      contract: [
        {
          parameter: { value: call, type_url: 'type.googleapis.com/protocol.TriggerSmartContract' },
          type: 'TriggerSmartContract',
        },
      ],
      ref_block_bytes: decoded.refBlockBytes,
      ref_block_hash: decoded.refBlockHash,
      expiration: Number(decoded.expiration),
      fee_limit: Number(decoded.feeLimit),
      timestamp: Number(decoded.timestamp),
    };
    const from = `0x${call.owner_address.slice(2)}` as Hex;
    let signer: string;
    try {
      signer = await recoverAddress({ hash: `0x${txID}`, signature: `0x${String(signature[0])}` });
    } catch {
      return refuse('SIGERROR', 'Validate signature error: bad signature');
    }
    if (signer.toLowerCase() !== from.toLowerCase())
      return refuse('SIGERROR', `Validate signature error: ${signer} is signed, but ${from} is the owner`);
    const gas = BigInt(Math.min(Math.floor(raw.fee_limit / prices.energySun), 30_000_000));
    await upstreamResult('anvil_impersonateAccount', [from]);
    const anvilHash = (await upstreamResult('eth_sendTransaction', [
      {
        from,
        to: `0x${call.contract_address.slice(2)}`,
        data: `0x${call.data}`,
        gas: `0x${gas.toString(16)}`,
        gasPrice: '0x0',
      },
    ])) as Hex;
    known.set(txID, {
      transaction: { txID, raw_data: raw, raw_data_hex: rawHex, signature: signature.map(String), visible: false },
      anvilHash,
      info: null,
    });
    return { result: true, txid: txID };
  }

  /** The info of a mined transaction (computed once: the account's resources are consumed then). */
  async function infoOf(entry: Known): Promise<Record<string, unknown> | null> {
    if (entry.info !== null) return entry.info;
    const receipt = (await upstreamResult('eth_getTransactionReceipt', [entry.anvilHash])) as {
      status: Hex;
      gasUsed: Hex;
      blockNumber: Hex;
    } | null;
    if (receipt === null) return null;
    const block = (await upstreamResult('eth_getBlockByNumber', [receipt.blockNumber, false])) as { timestamp: Hex };
    const call = entry.transaction.raw_data.contract[0]!.parameter.value;
    const key = `0x${call.owner_address.slice(2)}`.toLowerCase();
    const account = deps.resources.get(key);
    const energy = Number(BigInt(receipt.gasUsed));
    const ownEnergy = Math.max(0, (account.EnergyLimit ?? 0) - (account.EnergyUsed ?? 0));
    const fromOwn = Math.min(energy, ownEnergy);
    const energyFee = (energy - fromOwn) * prices.energySun;
    const bytes = Number(tronBandwidthOf(call.data.length / 2));
    const staked = Math.max(0, (account.NetLimit ?? 0) - (account.NetUsed ?? 0));
    const free = Math.max(0, FREE_NET_LIMIT - (account.freeNetUsed ?? 0));
    const next = { ...account, EnergyUsed: (account.EnergyUsed ?? 0) + fromOwn };
    let netUsage = 0;
    let netFee = 0;
    if (staked >= bytes) {
      netUsage = bytes;
      next.NetUsed = (account.NetUsed ?? 0) + bytes;
    } else if (free >= bytes) {
      netUsage = bytes;
      next.freeNetUsed = (account.freeNetUsed ?? 0) + bytes;
    } else netFee = bytes * prices.bandwidthSun;
    deps.resources.set(key, next);
    const succeeded = receipt.status === '0x1';
    // java-tron leaves zero fields out.
    const nonZero = (fields: Record<string, number>) =>
      Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== 0));
    entry.info = {
      id: entry.transaction.txID,
      ...nonZero({ fee: energyFee + netFee }),
      blockNumber: Number(BigInt(receipt.blockNumber)),
      blockTimeStamp: Number(BigInt(block.timestamp)) * 1000,
      contractResult: [''],
      contract_address: call.contract_address,
      receipt: {
        ...nonZero({ energy_usage_total: energy, energy_fee: energyFee, net_usage: netUsage, net_fee: netFee }),
        ...(fromOwn > 0 ? { energy_usage: fromOwn } : {}),
        result: succeeded ? 'SUCCESS' : 'REVERT',
      },
      ...(succeeded ? {} : { result: 'FAILED', resMessage: hexMessage('REVERT opcode executed') }),
    };
    return entry.info;
  }

  const txIDOf = (body: Record<string, unknown>) => String(body['value'] ?? '').toLowerCase();

  /** The answer to `path`, or null when it is not one of these calls. */
  return async (path: string, body: Record<string, unknown>): Promise<unknown> => {
    switch (path) {
      case '/wallet/triggersmartcontract':
        return trigger(body);
      case '/wallet/broadcasttransaction':
        return broadcast(body);
      case '/wallet/gettransactioninfobyid': {
        const entry = known.get(txIDOf(body));
        return (entry && (await infoOf(entry))) ?? {};
      }
      case '/wallet/gettransactionbyid': {
        const entry = known.get(txIDOf(body));
        if (entry === undefined) return {};
        const info = await infoOf(entry);
        const result = info === null ? {} : { ret: [{ contractRet: (info['receipt'] as { result: string }).result }] };
        return { ...result, ...entry.transaction };
      }
      default:
        return null;
    }
  };
}
