/** The deposit addresses chain followers watch, per network, in memory (lowercase hex). */
export type WatchedAddresses = {
  has(network: string, address: string): boolean;
  size(network: string): number;
  add(network: string, address: string): void;
};

export function createWatchedAddresses(): WatchedAddresses {
  const byNetwork = new Map<string, Set<string>>();
  return {
    has: (network, address) => byNetwork.get(network)?.has(address.toLowerCase()) ?? false,
    size: (network) => byNetwork.get(network)?.size ?? 0,
    add(network, address) {
      let set = byNetwork.get(network);
      if (!set) {
        set = new Set();
        byNetwork.set(network, set);
      }
      set.add(address.toLowerCase());
    },
  };
}
