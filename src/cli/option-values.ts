import { ConfigError } from '../app/config.ts';

/**
 * Every value of an option (`--public-key A --public-key B`, `--name=value`). One with no value
 * after it is a usage error: dropped, a trailing `--public-key` left the data dir's key trusted,
 * and a trailing `--bundle` verified the data dir instead of the bundle.
 */
export function options(argv: string[], name: string): string[] {
  const values: string[] = [];
  for (let index = 0; index < argv.length; index += 1) {
    const arg = argv[index]!;
    if (arg.startsWith(`${name}=`)) values.push(arg.slice(name.length + 1));
    else if (arg === name) {
      if (argv[index + 1] === undefined) throw new ConfigError(`${name} needs a value`);
      values.push(argv[++index]!);
    }
  }
  return values;
}

/** The value of an option given once (the last, if repeated), or undefined when not given. */
export const option = (argv: string[], name: string): string | undefined => options(argv, name).at(-1);
