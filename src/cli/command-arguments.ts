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
 * Why `argv` is not what the command takes, or null. An unknown option (`--prot 9000`) or a stray
 * word (`--name My Shop` unquoted) was silently dropped, so the command ran on a default instead.
 */
export function argumentProblem(argv: readonly string[], takes: CommandArguments): string | null {
  let positionals = 0;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (!arg.startsWith('--')) {
      positionals += 1;
      if (positionals > (takes.positionals ?? 0))
        return `unexpected argument ${JSON.stringify(arg)} (quote a value with spaces: --name "My Shop")`;
      continue;
    }
    const name = arg.split('=', 1)[0]!;
    if (takesSetting(takes, name)) i += settingArgumentCount(argv, i) - 1;
    else if (takes.valued?.includes(name)) i += arg.includes('=') ? 0 : 1;
    else if (!takes.switches?.includes(name)) return `unknown option ${name} (weir --help lists the options)`;
    else if (arg.includes('=')) return `${name} takes no value`;
  }
  return null;
}
