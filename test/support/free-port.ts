import { createServer } from 'node:net';

/** The default NATS client port: never handed out, so tests cannot collide with a developer's local server. */
const reservedPorts = new Set([4222]);

/**
 * Asks the OS for a currently free TCP port on `host` by listening on port 0 and closing again.
 *
 * The port is only free at the moment of the call: another process may take it before the caller
 * binds it, so callers that spawn a server should retry on EADDRINUSE.
 */
export async function findFreePort(host = '127.0.0.1'): Promise<number> {
  for (let attempt = 0; attempt < 20; attempt++) {
    const port = await listenOnEphemeralPort(host);
    if (!reservedPorts.has(port)) return port;
  }
  throw new Error(`findFreePort: could not get a free port on ${host} outside ${[...reservedPorts].join(', ')}`);
}

function listenOnEphemeralPort(host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', reject);
    server.listen({ port: 0, host, exclusive: true }, () => {
      const address = server.address();
      if (address === null || typeof address === 'string') {
        server.close();
        reject(new Error('findFreePort: server has no TCP address'));
        return;
      }
      server.close(() => resolve(address.port));
    });
  });
}
