import type { Address } from 'viem';
import { MalformedRpcResponseError } from './errors.ts';

/**
 * Checks of raw JSON-RPC values. The follower reads the node's raw answers (no viem formatters, so
 * a chain's extra transaction types never break it) and checks only the fields it uses.
 */
export type RpcValueReader = {
  fail(message: string): never;
  record(value: unknown, what: string): Record<string, unknown>;
  /** A hex quantity that must fit a JavaScript number (block numbers, indexes, chain ids). */
  smallQuantity(value: unknown, what: string): number;
  quantity(value: unknown, what: string): bigint;
  hash(value: unknown, what: string): string;
  address(value: unknown, what: string): Address;
  hexData(value: unknown, what: string): string;
};

const HASH = /^0x[0-9a-fA-F]{64}$/;
const QUANTITY = /^0x[0-9a-fA-F]+$/;
const DATA = /^0x(?:[0-9a-fA-F]{2})*$/;
const ADDRESS = /^0x[0-9a-fA-F]{40}$/;

export function rpcValueReader(network: string, method: string): RpcValueReader {
  const fail = (message: string): never => {
    throw new MalformedRpcResponseError(network, method, message);
  };
  const quantity = (value: unknown, what: string): bigint => {
    if (typeof value !== 'string' || !QUANTITY.test(value))
      fail(`${what} is ${JSON.stringify(value)}, not a hex quantity`);
    return BigInt(value as string);
  };
  return {
    fail,
    record(value, what) {
      if (typeof value !== 'object' || value === null || Array.isArray(value)) fail(`${what} is not an object`);
      return value as Record<string, unknown>;
    },
    quantity,
    smallQuantity(value, what) {
      const big = quantity(value, what);
      if (big > BigInt(Number.MAX_SAFE_INTEGER)) fail(`${what} ${big} is too large`);
      return Number(big);
    },
    hash(value, what) {
      if (typeof value !== 'string' || !HASH.test(value))
        fail(`${what} is ${JSON.stringify(value)}, not a 32-byte hash`);
      return (value as string).toLowerCase();
    },
    address(value, what) {
      if (typeof value !== 'string' || !ADDRESS.test(value))
        fail(`${what} is ${JSON.stringify(value)}, not an address`);
      return (value as string).toLowerCase() as Address;
    },
    hexData(value, what) {
      if (typeof value !== 'string' || !DATA.test(value)) fail(`${what} is ${JSON.stringify(value)}, not hex data`);
      return (value as string).toLowerCase();
    },
  };
}

export const toQuantity = (value: number | bigint): string => `0x${value.toString(16)}`;
