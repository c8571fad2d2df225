import { createInterface } from 'node:readline';
import { Writable } from 'node:stream';
import { ConfigError } from '../app/config.ts';

/** All of standard input, without its last line break (`--password-stdin`, as `docker login` reads one). */
async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks)
    .toString('utf8')
    .replace(/\r?\n$/, '');
}

/** Asks on the terminal without echoing what is typed. */
function prompt(question: string): Promise<string> {
  const muted = new Writable({
    write(_chunk, _encoding, done) {
      done();
    },
  });
  process.stderr.write(question);
  const rl = createInterface({ input: process.stdin, output: muted, terminal: true });
  return new Promise((resolve) => {
    rl.question('', (answer) => {
      rl.close();
      process.stderr.write('\n');
      resolve(answer);
    });
  });
}

/**
 * A new user's password, never from the command line (where `ps` shows it): `--password-stdin`,
 * else `WEIR_USER_PASSWORD`, else asked twice on the terminal. Without any of them (no terminal,
 * as in CI) it is an error that says how to give one.
 */
export async function readNewPassword(options: { stdin: boolean; env: NodeJS.ProcessEnv }): Promise<string> {
  if (options.stdin) return readStdin();
  const fromEnv = options.env.WEIR_USER_PASSWORD;
  if (fromEnv !== undefined && fromEnv !== '') return fromEnv;
  if (!process.stdin.isTTY)
    throw new ConfigError(
      'user create needs a password: --password-stdin (and the password on standard input), WEIR_USER_PASSWORD, or a terminal to type it in',
    );
  const first = await prompt('Password: ');
  const second = await prompt('Password again: ');
  if (first !== second) throw new ConfigError('the two passwords differ');
  return first;
}
