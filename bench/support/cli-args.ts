/** Readers for a benchmark's `--name value` arguments. */
export function cliArgs(argv: string[]) {
  const value = (name: string): string | undefined => {
    const index = argv.indexOf(name);
    return index >= 0 ? argv[index + 1] : undefined;
  };
  /** A whole number from 1 to `max`, or `fallback` when absent. */
  const integer = (name: string, fallback: number, max: number): number => {
    const raw = value(name);
    if (raw === undefined) return fallback;
    const parsed = Number(raw);
    if (!Number.isInteger(parsed) || parsed < 1 || parsed > max)
      throw new Error(`${name} must be an integer from 1 to ${max}, got ${raw}`);
    return parsed;
  };
  return { value, integer, flag: (name: string) => argv.includes(name) };
}
