/** The bus (or the connection under it) has been closed; open a new one. */
export class BusClosedError extends Error {
  override name = 'BusClosedError';
  constructor(message = 'the bus is closed', options?: ErrorOptions) {
    super(message, options);
  }
}

/** The bus could not reach or set up its broker; the message names the server URL. */
export class BusConnectionError extends Error {
  override name = 'BusConnectionError';
}

/** A subject, filter or durable name the bus cannot use; the message says which and why. */
export class BusArgumentError extends Error {
  override name = 'BusArgumentError';
}

/** A publish was not stored by the broker (no stream for the subject, timeout, ...). */
export class BusPublishError extends Error {
  override name = 'BusPublishError';
}
