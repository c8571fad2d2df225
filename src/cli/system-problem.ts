import { existsSync } from 'node:fs';
import { dirname } from 'node:path';

/** A path the operator gave that cannot be used, by why. */
const PATH_CODES = new Map([
  ['EACCES', 'not allowed to this user'],
  ['EPERM', 'not allowed to this user'],
  ['ENOTDIR', 'a file stands where a folder is needed'],
  ['EISDIR', 'a folder stands where a file is needed'],
  ['EEXIST', 'exists already, and not as a folder'],
  ['EROFS', 'on a read-only file system'],
  ['ENOSPC', 'no space left on its device'],
]);

/** Why ENOENT: the path's folder is missing, a folder such as /proc refuses a new one, or the path is missing. */
function missingWhy(path: string, syscall: string): string {
  const folder = dirname(path);
  if (!existsSync(folder)) return `its folder ${folder} does not exist`;
  return syscall === 'mkdir' ? `${folder} takes no new folder` : 'does not exist';
}

const portInUse = (port: number | undefined, address: string | undefined, options: string): string =>
  `port ${port} on ${address} is in use: stop what listens there, or choose another port (${options})`;

/**
 * A port a command was told to listen on is taken, with where the operator chooses another
 * (`weir devnet` has one option per chain, and anvil reports it in its own words).
 */
export class PortInUseError extends Error {
  override readonly name = 'PortInUseError';
  constructor(port: number, address: string, options: string) {
    super(portInUse(port, address, options));
  }
}

/**
 * What an operator can fix, said in a line, for an error of the system rather than of Weir (a port
 * taken, a host that does not resolve, a folder that cannot be written); null for anything else,
 * which keeps its stack trace.
 */
export function systemProblem(error: unknown): string | null {
  if (error instanceof PortInUseError) return error.message;
  const e = error as Partial<NodeJS.ErrnoException> & { address?: string; port?: number; hostname?: string };
  if (!(error instanceof Error) || typeof e.code !== 'string' || typeof e.syscall !== 'string') return null;
  if (e.syscall === 'listen' && e.code === 'EADDRINUSE') return portInUse(e.port, e.address, '--port, PORT');
  if (e.syscall === 'listen' && e.code === 'EACCES')
    return `port ${e.port} on ${e.address} needs privileges this user lacks: choose a port above 1023 (--port, PORT)`;
  if (e.syscall === 'listen' && e.code === 'EADDRNOTAVAIL')
    return `${e.address} is no address of this machine: choose another bind address (--host, HOST)`;
  if (e.syscall === 'getaddrinfo')
    return `the host name ${e.hostname} does not resolve (${e.code}): check --host (HOST) and the URLs given`;
  if (typeof e.path !== 'string') return null;
  if (e.code === 'ENOENT') return `${e.path}: ${missingWhy(e.path, e.syscall)} (ENOENT)`;
  const why = PATH_CODES.get(e.code);
  if (why) return `${e.path}: ${why} (${e.code})`;
  return null;
}
