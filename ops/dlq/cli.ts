import { parseCommand, USAGE, type Command } from './args';
import { runCommand, succeeded } from './commands';
import { openContext, type DlqContext } from './context';
import { formatReport } from './format';
import { UsageError } from './queues';

/**
 * `npm run dlq -- list | show <queue> | redrive <queue>`: the operator's DLQ
 * tool, on the local runtime by default or on a deployed stack with --stack.
 * Exit codes: 0 done, 1 something failed, 2 usage error.
 */
export interface CliIo {
  out: (text: string) => void;
  err: (text: string) => void;
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
    // Progress goes to stderr, so --json output on stdout stays one document.
    const report = await runCommand(command, context, (line) => io.err(line));
    io.out(command.json ? JSON.stringify(report, null, 2) : formatReport(report));
    return succeeded(report) ? 0 : 1;
  } catch (error) {
    if (error instanceof UsageError) {
      io.err(`${error.message}\n\n${USAGE}`);
      return 2;
    }
    io.err(`dlq: ${(error as Error).message}`);
    return 1;
  } finally {
    context?.close();
  }
}

if (require.main === module) {
  // The tool talks to the emulators or the user's account; the SDK's Node-version notice is noise here.
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
  void main(process.argv.slice(2), {
    out: (text) => process.stdout.write(`${text}\n`),
    err: (text) => process.stderr.write(`${text}\n`),
  }).then((code) => process.exit(code));
}
