import '../cli/require-node'; // first: an unsupported Node stops here, before anything loads
import { parseCommand, USAGE, type Command } from './args';
import { runCommand, succeeded } from './commands';
import { openContext, type DlqContext } from './context';
import { formatReport } from './format';
import { UsageError } from './queues';
import { EXIT } from '../cli/exit';
import { accessDeniedLine } from '../cli/access-denied';
import { RuntimeNotRunningError } from '../stack';

/**
 * `npm run dlq -- list | show <queue> | redrive <queue>`: the operator's DLQ
 * tool, on the local runtime by default or on a deployed stack with --stack.
 * Exit codes: 0 done, 1 something failed, 2 usage error, 3 the local runtime is not running
 * (packages/tools/src/cli/exit.ts, shared by every command).
 */
export interface CliIo {
  out: (text: string) => void;
  err: (text: string) => void;
  /** The progress line of a long move (a terminal redraws it in place); none when undefined. */
  progress?: (line: string) => void;
  open?: (command: Exclude<Command, { command: 'help' }>) => Promise<DlqContext>;
}

export async function main(argv: string[], io: CliIo): Promise<number> {
  let command: Command;
  try {
    command = parseCommand(argv);
  } catch (error) {
    io.err(`${(error as Error).message}\n\n${USAGE}`);
    return 2;
  }
  if (command.command === 'help') {
    io.out(USAGE);
    return 0;
  }
  let context: DlqContext | undefined;
  try {
    context = await (io.open ?? openContext)(command);
    const report = await runCommand(command, context, io.progress);
    io.out(command.json ? JSON.stringify(report, null, 2) : formatReport(report));
    return succeeded(report) ? 0 : 1;
  } catch (error) {
    if (error instanceof UsageError) {
      io.err(`${error.message}\n\n${USAGE}`);
      return 2;
    }
    io.err(accessDeniedLine(error, 'dlq') ?? `dlq: ${(error as Error).message}`);
    return error instanceof RuntimeNotRunningError ? EXIT.notRunning : EXIT.failed;
  } finally {
    context?.close();
  }
}

if (require.main === module) {
  // The tool talks to the emulators or the user's account; the SDK's Node-version notice is noise here.
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
  // Progress goes to stderr (stdout stays one --json document), redrawn in place on a terminal only.
  let drawn = false;
  const progress = process.stderr.isTTY
    ? (line: string) => {
        drawn = true;
        process.stderr.write(`\r\x1b[K${line}`);
      }
    : undefined;
  void main(process.argv.slice(2), {
    out: (text) => {
      if (drawn) process.stderr.write('\n');
      drawn = false;
      process.stdout.write(`${text}\n`);
    },
    err: (text) => process.stderr.write(`${text}\n`),
    progress,
  }).then((code) => process.exit(code));
}
