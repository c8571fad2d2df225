export {
  createEvmFollower,
  followedNetwork,
  type EvmFollower,
  type EvmFollowerCounters,
  type EvmFollowerDeps,
  type EvmFollowerNetwork,
  type EvmFollowerStatus,
} from './evm-follower.ts';
export {
  createInMemoryCheckpointStore,
  parseCheckpoint,
  type CheckpointBlock,
  type CheckpointStore,
  type EvmFollowerCheckpoint,
} from './checkpoint.ts';
export { checkpointFilePath, createFileCheckpointStore } from './file-checkpoint-store.ts';
export type { FollowedToken } from './extract-transfers.ts';
export type { RpcCounters } from './rpc-endpoints.ts';
export {
  ChainChangedWhileReadingError,
  CheckpointMismatchError,
  CheckpointStoreError,
  DeepReorgError,
  EvmFollowerConfigError,
  EvmFollowerStateError,
  LogRangeError,
  MalformedRpcResponseError,
  RpcEndpointsError,
  WrongChainError,
  type EndpointFailure,
} from './errors.ts';
