import { RuntimeNotRunningError } from '../stack';

/**
 * The exit statuses every command shares, so a script can tell them apart the same way for each:
 * 0 done, 1 something failed (the output says what), 2 a usage error (the usage follows the message),
 * 3 the local runtime is not running (start it with `npm start`).
 *
 * @example
 *   return response.ok ? EXIT.ok : EXIT.failed;
 */
export const EXIT = { ok: 0, failed: 1, usage: 2, notRunning: 3 } as const;

/**
 * A command line the command cannot run: printed with the usage, exit 2.
 *
 * @example
 *   if (extra.length > 0) throw new UsageError(`Unexpected argument "${extra[0]}"`);
 */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

/**
 * `node:util`'s `parseArgs`, whose own errors (an unknown option, a missing value) become a UsageError,
 * so every command answers a bad flag with its usage and exit 2, not with Node's stack.
 *
 * @example
 *   const { values } = parseCommandLine(() => parseArgs({ args: argv, options: { help: { type: 'boolean' } } }));
 */
export function parseCommandLine<T>(parse: () => T): T {
  try {
    return parse();
  } catch (error) {
    // Node's own text goes on to suggest '-- "--flag"' for a positional: not what a mistyped flag needs.
    if (isUsageError(error) && !(error instanceof UsageError))
      throw new UsageError(error.message.split('. To specify a positional')[0]);
    throw error;
  }
}

/**
 * A usage error: a UsageError, or `parseArgs`'s own (an unknown option, a missing value), for a command
 * that lets those propagate to its last handler.
 *
 * @example
 *   console.error(isUsageError(error) ? `${error.message}\n\n${USAGE}` : String(error));
 */
export function isUsageError(error: unknown): error is Error {
  return error instanceof UsageError || String((error as NodeJS.ErrnoException)?.code).startsWith('ERR_PARSE_ARGS');
}

/**
 * The exit status for an error that ended a command: usage 2, runtime not running 3, anything else 1.
 *
 * @example
 *   main().catch((error) => process.exit(exitStatusOf(error)));
 */
export function exitStatusOf(error: unknown): number {
  if (isUsageError(error)) return EXIT.usage;
  if (error instanceof RuntimeNotRunningError) return EXIT.notRunning;
  return EXIT.failed;
}
