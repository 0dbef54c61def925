import { UsageError } from './exit';

/**
 * `--tooling MODULE`, the flag each command that reads the domain takes to name its tooling module (the
 * runtime tests name the neutral fixture's): split off the command line before the command's own parsing,
 * and documented in each command's `--help` by the same line.
 */

/** The flag every command takes to name its tooling module: `DomainSource.toolingModule` in load-domain.ts. */
export const TOOLING_FLAG = '--tooling';

/**
 * The `--tooling` line of each command's `--help`, its description starting at `column` as the
 * command's other flags do.
 *
 * @example
 * ```ts
 * const USAGE = `Usage: npm run sim -- [options]\n  ${toolingFlagHelp(25)}`;
 * ```
 */
export function toolingFlagHelp(column: number): string {
  return `${`${TOOLING_FLAG} MODULE`.padEnd(column - 1)} the domain's tooling module (a path from the root, exporting \`tooling\`; default: tooling/<exactlyOnce.example>)`;
}

/**
 * Splits `--tooling MODULE` (or `--tooling=MODULE`) off a command line, before the command parses the
 * rest: the module, and the arguments without it. A `--tooling` with no module is a usage error.
 *
 * @example
 * ```ts
 * const { toolingModule, args } = takeToolingFlag(process.argv.slice(2));
 * const domain = loadDomain(PROJECT_DIR, { toolingModule }); // load-domain.ts
 * ```
 */
export function takeToolingFlag(argv: readonly string[]): { toolingModule?: string; args: string[] } {
  const args: string[] = [];
  let toolingModule: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--') {
      args.push(...argv.slice(i));
      break;
    }
    if (arg === TOOLING_FLAG || arg.startsWith(`${TOOLING_FLAG}=`)) {
      const value = arg === TOOLING_FLAG ? argv[++i] : arg.slice(TOOLING_FLAG.length + 1);
      if (value === undefined || value === '' || value.startsWith('-'))
        throw new UsageError(`${TOOLING_FLAG} needs the path of a tooling module`);
      toolingModule = value;
      continue;
    }
    args.push(arg);
  }
  return { ...(toolingModule === undefined ? {} : { toolingModule }), args };
}
