export type ReadStoreUsageErrorCode =
  | 'invalid_document'
  | 'invalid_collection_name'
  | 'invalid_find_options'
  | 'invalid_pipeline'
  | 'invalid_checkpoint'
  | 'invalid_options'
  | 'closed';

/**
 * A read store was used in a way both adapters refuse: a document that is not plain JSON
 * (a bigint, a Date, NaN, a class instance), a reserved or malformed collection name, bad
 * paging options, a pipeline the embedded store cannot run ($out, $merge), a corrupt
 * checkpoint, or a write after `close`. This is a bug in the caller, not bad user input.
 */
export class ReadStoreUsageError extends Error {
  override readonly name = 'ReadStoreUsageError';
  constructor(
    readonly code: ReadStoreUsageErrorCode,
    message: string,
  ) {
    super(message);
  }
}
