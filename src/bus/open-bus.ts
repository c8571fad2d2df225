import type { Bus } from './bus.ts';
import { createInProcessBus } from './in-process-bus.ts';
import { createNatsJetStreamBus } from './nats-jetstream-bus.ts';

export type OpenBusOptions = {
  /** NATS server URL: when set (non-empty) the bus is NATS JetStream, else the in-process bus. */
  natsUrl?: string | undefined;
  /** NATS: trouble outside any call (the connection lost, a consumer's loop failing), and lines about a durable's state. */
  onError?: (error: Error) => void;
  log?: (line: string) => void;
};

/** The bus for this process: NATS JetStream when a URL is given, else in-process (no services needed). */
export async function openBus(options: OpenBusOptions = {}): Promise<Bus> {
  const natsUrl = options.natsUrl?.trim();
  if (natsUrl !== undefined && natsUrl !== '')
    return createNatsJetStreamBus({
      servers: natsUrl,
      ...(options.onError ? { onError: options.onError } : {}),
      ...(options.log ? { log: options.log } : {}),
    });
  return createInProcessBus();
}
