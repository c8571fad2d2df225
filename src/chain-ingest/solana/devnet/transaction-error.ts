import type { FailedTransactionMetadata } from 'litesvm';

/** A transaction error as a node writes it in JSON: `"AccountInUse"`, `{"InstructionError":[0,{"Custom":1}]}`. */
export type TransactionErrorJson = string | Record<string, unknown>;

/*
 * litesvm hands errors over as numbers of Agave's `TransactionError` / `InstructionError` enums
 * (declared as const enums, which isolated modules cannot read), so their names are listed here
 * in declaration order (litesvm 1.5, `dist/internal.d.ts`).
 */
const TRANSACTION_ERRORS = [
  'AccountInUse',
  'AccountLoadedTwice',
  'AccountNotFound',
  'ProgramAccountNotFound',
  'InsufficientFundsForFee',
  'InvalidAccountForFee',
  'AlreadyProcessed',
  'BlockhashNotFound',
  'CallChainTooDeep',
  'MissingSignatureForFee',
  'InvalidAccountIndex',
  'SignatureFailure',
  'InvalidProgramForExecution',
  'SanitizeFailure',
  'ClusterMaintenance',
  'AccountBorrowOutstanding',
  'WouldExceedMaxBlockCostLimit',
  'UnsupportedVersion',
  'InvalidWritableAccount',
  'WouldExceedMaxAccountCostLimit',
  'WouldExceedAccountDataBlockLimit',
  'TooManyAccountLocks',
  'AddressLookupTableNotFound',
  'InvalidAddressLookupTableOwner',
  'InvalidAddressLookupTableData',
  'InvalidAddressLookupTableIndex',
  'InvalidRentPayingAccount',
  'WouldExceedMaxVoteCostLimit',
  'WouldExceedAccountDataTotalLimit',
  'MaxLoadedAccountsDataSizeExceeded',
  'ResanitizationNeeded',
  'InvalidLoadedAccountsDataSizeLimit',
  'UnbalancedTransaction',
  'ProgramCacheHitMaxLimit',
  'CommitCancelled',
];

const INSTRUCTION_ERRORS = [
  'GenericError',
  'InvalidArgument',
  'InvalidInstructionData',
  'InvalidAccountData',
  'AccountDataTooSmall',
  'InsufficientFunds',
  'IncorrectProgramId',
  'MissingRequiredSignature',
  'AccountAlreadyInitialized',
  'UninitializedAccount',
  'UnbalancedInstruction',
  'ModifiedProgramId',
  'ExternalAccountLamportSpend',
  'ExternalAccountDataModified',
  'ReadonlyLamportChange',
  'ReadonlyDataModified',
  'DuplicateAccountIndex',
  'ExecutableModified',
  'RentEpochModified',
  'NotEnoughAccountKeys',
  'AccountDataSizeChanged',
  'AccountNotExecutable',
  'AccountBorrowFailed',
  'AccountBorrowOutstanding',
  'DuplicateAccountOutOfSync',
  'InvalidError',
  'ExecutableDataModified',
  'ExecutableLamportChange',
  'ExecutableAccountNotRentExempt',
  'UnsupportedProgramId',
  'CallDepth',
  'MissingAccount',
  'ReentrancyNotAllowed',
  'MaxSeedLengthExceeded',
  'InvalidSeeds',
  'InvalidRealloc',
  'ComputationalBudgetExceeded',
  'PrivilegeEscalation',
  'ProgramEnvironmentSetupFailure',
  'ProgramFailedToComplete',
  'ProgramFailedToCompile',
  'Immutable',
  'IncorrectAuthority',
  'AccountNotRentExempt',
  'InvalidAccountOwner',
  'ArithmeticOverflow',
  'UnsupportedSysvar',
  'IllegalOwner',
  'MaxAccountsDataAllocationsExceeded',
  'MaxAccountsExceeded',
  'MaxInstructionTraceLengthExceeded',
  'BuiltinProgramsMustConsumeComputeUnits',
  'BorshIoError',
];

type LiteSvmError = ReturnType<FailedTransactionMetadata['err']>;

/** The JSON a node reports for a litesvm transaction error. */
export function transactionErrorJson(error: LiteSvmError): TransactionErrorJson {
  if (typeof error === 'number') return TRANSACTION_ERRORS[error] ?? `TransactionError${error}`;
  if ('err' in error) return { InstructionError: [error.index, instructionErrorJson(error.err())] };
  if ('index' in error) return { DuplicateInstruction: error.index };
  const name = error.constructor.name.startsWith('TransactionErrorProgramExecution')
    ? 'ProgramExecutionTemporarilyRestricted'
    : 'InsufficientFundsForRent';
  return { [name]: { account_index: error.accountIndex } };
}

function instructionErrorJson(error: ReturnType<Extract<LiteSvmError, { err(): unknown }>['err']>): unknown {
  if (typeof error === 'number') return INSTRUCTION_ERRORS[error] ?? `InstructionError${error}`;
  if ('code' in error) return { Custom: error.code };
  return { BorshIoError: error.msg };
}

/** How a node words an error in a failed simulation's message. */
export function describeTransactionError(error: TransactionErrorJson): string {
  if (typeof error === 'string') return error;
  const instruction = error['InstructionError'];
  if (Array.isArray(instruction)) {
    const [index, inner] = instruction as [number, unknown];
    const custom = typeof inner === 'object' && inner !== null && 'Custom' in inner ? inner.Custom : undefined;
    const what = typeof custom === 'number' ? `custom program error: 0x${custom.toString(16)}` : JSON.stringify(inner);
    return `Error processing Instruction ${index}: ${what}`;
  }
  return JSON.stringify(error);
}
