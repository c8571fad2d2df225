import { isSettingFlag, settingArgumentCount } from '../app/config.ts';

/** What a command takes on its command line: anything else is refused, so a typo never passes for a default. */
export type CommandArguments = {
  /** Whether it reads the settings (`--port`, `--data-dir`, …), or the flags of those it reads alone. */
  settings: boolean | readonly string[];
  /** Its own options followed by a value (`--name NAME`). */
  valued?: readonly string[];
  /** Its own options that stand alone (`--json`). */
  switches?: readonly string[];
  /** How many bare arguments it takes (`inspect RECORD_ID`: 1). */
  positionals?: number;
};

/** Whether the command reads the setting whose flag is `name`. */
export const takesSetting = (takes: CommandArguments, name: string): boolean =>
  takes.settings === true ? isSettingFlag(name) : takes.settings !== false && takes.settings.includes(name);

/**
 * What `argv` holds for the command: its bare arguments (wherever they stand among the options) and the
 * options, or
 * why it is not what the command takes. An unknown option (`--prot 9000`) or a stray word
 * (`--name My Shop` unquoted) was silently dropped, so the command ran on a default instead.
 */
export function readArguments(
  argv: readonly string[],
  takes: CommandArguments,
): { positionals: string[]; options: string[]; problem: null } | { problem: string } {
  const at = new Set<number>();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (!arg.startsWith('--')) {
      at.add(i);
      if (at.size > (takes.positionals ?? 0))
        return { problem: `unexpected argument ${JSON.stringify(arg)} (quote a value with spaces: --name "My Shop")` };
      continue;
    }
    const name = arg.split('=', 1)[0]!;
    if (takesSetting(takes, name)) i += settingArgumentCount(argv, i) - 1;
    else if (takes.valued?.includes(name)) i += arg.includes('=') ? 0 : 1;
    else if (!takes.switches?.includes(name))
      return { problem: `unknown option ${name} (weir --help lists the options)` };
    else if (arg.includes('=')) return { problem: `${name} takes no value` };
  }
  return {
    positionals: argv.filter((_, i) => at.has(i)),
    options: argv.filter((_, i) => !at.has(i)),
    problem: null,
  };
}

/** Why `argv` is not what the command takes, or null (see `readArguments`). */
export const argumentProblem = (argv: readonly string[], takes: CommandArguments): string | null =>
  readArguments(argv, takes).problem;
