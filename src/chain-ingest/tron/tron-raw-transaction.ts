/*
 * The protobuf bytes of a Tron `Transaction.raw` carrying one TriggerSmartContract (java-tron's
 * protocol/Tron.proto and smart_contract.proto), the part of them a sweep needs: the node builds a
 * sweep and Weir signs its txID = sha256(raw_data_hex), so Weir reads those bytes back before
 * signing, rather than trusting the node's JSON `raw_data`, to be sure it signs the call it asked for.
 *
 * raw: ref_block_bytes 1, ref_block_num 3, ref_block_hash 4, expiration 8, contract 11 (repeated),
 * timestamp 14, fee_limit 18. Contract: type 1 (TriggerSmartContract = 31), parameter 2 (Any:
 * type_url 1, value 2). TriggerSmartContract: owner_address 1, contract_address 2, call_value 3, data 4.
 */

export const TRIGGER_SMART_CONTRACT = 31;
const TRIGGER_TYPE_URL = 'type.googleapis.com/protocol.TriggerSmartContract';

export type TronTriggerRaw = {
  refBlockBytes: string;
  refBlockHash: string;
  expiration: bigint;
  timestamp: bigint;
  feeLimit: bigint;
  /** Each contract of the transaction; a sweep has exactly one TriggerSmartContract. */
  contracts: { type: number; owner: string; contract: string; callValue: bigint; data: string }[];
};

export class TronRawTransactionError extends Error {
  override readonly name = 'TronRawTransactionError';
}

function varint(value: bigint): number[] {
  const out: number[] = [];
  let rest = value;
  do {
    let byte = Number(rest & 0x7fn);
    rest >>= 7n;
    if (rest > 0n) byte |= 0x80;
    out.push(byte);
  } while (rest > 0n);
  return out;
}

const hexBytes = (hex: string) => [...Buffer.from(hex.replace(/^0x/, ''), 'hex')];
const keyOf = (field: number, wire: number) => varint(BigInt((field << 3) | wire));
const bytesField = (field: number, bytes: number[]) =>
  bytes.length === 0 ? [] : [...keyOf(field, 2), ...varint(BigInt(bytes.length)), ...bytes];
const intField = (field: number, value: bigint) => (value === 0n ? [] : [...keyOf(field, 0), ...varint(value)]);

/** The raw transaction's protobuf bytes, hex (no 0x); fields in number order, zero values left out, as protobuf writes them. */
export function encodeTronTriggerRaw(raw: TronTriggerRaw): string {
  const contracts = raw.contracts.flatMap((c) => {
    const value = [
      ...bytesField(1, hexBytes(c.owner)),
      ...bytesField(2, hexBytes(c.contract)),
      ...intField(3, c.callValue),
      ...bytesField(4, hexBytes(c.data)),
    ];
    const any = [...bytesField(1, [...Buffer.from(TRIGGER_TYPE_URL, 'utf8')]), ...bytesField(2, value)];
    return bytesField(11, [...intField(1, BigInt(c.type)), ...bytesField(2, any)]);
  });
  return Buffer.from([
    ...bytesField(1, hexBytes(raw.refBlockBytes)),
    ...bytesField(4, hexBytes(raw.refBlockHash)),
    ...intField(8, raw.expiration),
    ...contracts,
    ...intField(14, raw.timestamp),
    ...intField(18, raw.feeLimit),
  ]).toString('hex');
}

type Field = { field: number; int?: bigint; bytes?: Buffer };

/** The fields of one protobuf message; throws on bytes that are not one. */
function fieldsOf(bytes: Buffer): Field[] {
  const fields: Field[] = [];
  let at = 0;
  const readVarint = (): bigint => {
    let value = 0n;
    for (let shift = 0n; ; shift += 7n) {
      if (at >= bytes.length || shift > 63n) throw new TronRawTransactionError('truncated varint');
      const byte = bytes[at++]!;
      value |= BigInt(byte & 0x7f) << shift;
      if ((byte & 0x80) === 0) return value;
    }
  };
  while (at < bytes.length) {
    const key = Number(readVarint());
    const field = key >> 3;
    const wire = key & 7;
    if (wire === 0) fields.push({ field, int: readVarint() });
    else if (wire === 2) {
      const length = Number(readVarint());
      if (at + length > bytes.length) throw new TronRawTransactionError('truncated field');
      fields.push({ field, bytes: bytes.subarray(at, at + length) });
      at += length;
    } else if (wire === 1 || wire === 5) at += wire === 1 ? 8 : 4;
    else throw new TronRawTransactionError(`unknown wire type ${wire}`);
  }
  return fields;
}

const one = (fields: Field[], n: number) => fields.find((f) => f.field === n);
const hexOf = (f: Field | undefined) => f?.bytes?.toString('hex') ?? '';
const intOf = (f: Field | undefined) => f?.int ?? 0n;

/** Reads `raw_data_hex` (protobuf, hex); the contracts other than TriggerSmartContract keep their type only. */
export function decodeTronTriggerRaw(rawDataHex: string): TronTriggerRaw {
  if (!/^(?:[0-9a-fA-F]{2})*$/.test(rawDataHex)) throw new TronRawTransactionError('raw_data_hex is not hex');
  const raw = fieldsOf(Buffer.from(rawDataHex, 'hex'));
  return {
    refBlockBytes: hexOf(one(raw, 1)),
    refBlockHash: hexOf(one(raw, 4)),
    expiration: intOf(one(raw, 8)),
    timestamp: intOf(one(raw, 14)),
    feeLimit: intOf(one(raw, 18)),
    contracts: raw
      .filter((f) => f.field === 11 && f.bytes !== undefined)
      .map((f) => {
        const contract = fieldsOf(f.bytes!);
        const type = Number(intOf(one(contract, 1)));
        // The contract's `parameter` is a protobuf Any: its field 2 holds the call's bytes.
        const parameter = fieldsOf(one(contract, 2)?.bytes ?? Buffer.alloc(0));
        const value = type === TRIGGER_SMART_CONTRACT ? fieldsOf(one(parameter, 2)?.bytes ?? Buffer.alloc(0)) : [];
        return {
          type,
          owner: hexOf(one(value, 1)),
          contract: hexOf(one(value, 2)),
          callValue: intOf(one(value, 3)),
          data: hexOf(one(value, 4)),
        };
      }),
  };
}
