import type { Bus } from '../../bus/bus.ts';
import { chainSubject, transferId, type ChainTransferMessage } from '../chain-messages.ts';
import type { WatchedAddresses } from '../watched-addresses.ts';
import { evmToTron } from './address.ts';

/*
 * The Tron rail's edge. The EVM follower reads the full node's eth_ JSON-RPC, where addresses are
 * the 20 bytes (`0x…`, the 0x41 byte dropped); everything past the rail (the matcher, sessions,
 * webhooks, pages) holds the T… form. These wrappers convert between the two, so the follower
 * runs unchanged: it asks the watched set about `0x…` addresses and publishes `0x…` messages,
 * which leave on the bus in T… form.
 */

const EVM_HEX = /^0x[0-9a-fA-F]{40}$/;

/** `address` in T… form when it is a 20-byte hex one; as it is otherwise (already T…, or `native`). */
export const asTron = (address: string): string => (EVM_HEX.test(address) ? evmToTron(address) : address);

/** A transfer with its addresses (from, to, the token contract) in T… form. */
export function tronTransfer(message: ChainTransferMessage): ChainTransferMessage {
  return {
    ...message,
    from: asTron(message.from),
    to: asTron(message.to),
    asset: { ...message.asset, address: asTron(message.asset.address) },
  };
}

/** The watched set as the EVM follower asks it: by `0x…` address, answered from the T… addresses watched. */
export function tronWatched(watched: WatchedAddresses): WatchedAddresses {
  return {
    has: (network, address) => watched.has(network, asTron(address)),
    size: (network) => watched.size(network),
    add: (network, address) => watched.add(network, asTron(address)),
  };
}

/**
 * The bus as the follower publishes on it: transfers of `network` leave in T… form, and their ids
 * are remembered with their block (`published`), so the solidified re-read credits only what the
 * follower missed (it forgets them once their block is rechecked).
 */
export function tronBus(bus: Bus, network: string, published: Map<string, number>): Bus {
  const transferSubject = chainSubject(network, 'transfer');
  return {
    async publish(subject, data, options) {
      if (subject !== transferSubject) return bus.publish(subject, data, options);
      const message = tronTransfer(JSON.parse(Buffer.from(data).toString('utf8')) as ChainTransferMessage);
      await bus.publish(subject, Buffer.from(JSON.stringify(message)), options);
      published.set(transferId(message), message.blockNumber);
    },
    consume: (options, handler) => bus.consume(options, handler),
    deleteDurable: (name) => bus.deleteDurable(name),
    close: () => bus.close(),
  };
}
