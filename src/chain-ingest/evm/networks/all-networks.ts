import { arbitrum, arbitrumSepolia } from './arbitrum.ts';
import { base, baseSepolia } from './base.ts';
import { bsc, bscTestnet } from './bsc.ts';
import type { EvmNetwork } from './define-network.ts';
import { DEVNET_CHAIN_ID } from './devnet.ts';
import { ethereum, ethereumSepolia } from './ethereum.ts';
import { optimism, optimismSepolia } from './optimism.ts';
import { polygon, polygonAmoy } from './polygon.ts';

/** Every public EVM network Weir knows, mainnets and testnets. The devnet is built at runtime (`devnetNetwork`). */
export const EVM_NETWORKS: readonly EvmNetwork[] = Object.freeze([
  ethereum,
  ethereumSepolia,
  polygon,
  polygonAmoy,
  bsc,
  bscTestnet,
  base,
  baseSepolia,
  arbitrum,
  arbitrumSepolia,
  optimism,
  optimismSepolia,
]);

/** Chain ids an RPC configuration may name: the public networks plus the local devnet. */
export const KNOWN_EVM_CHAIN_IDS: readonly number[] = Object.freeze([
  ...EVM_NETWORKS.map((n) => n.chainId),
  DEVNET_CHAIN_ID,
]);
