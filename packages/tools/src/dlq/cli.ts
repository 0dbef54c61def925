import '../cli/require-node'; // first: an unsupported Node stops here, before anything loads
import { parseCommand, usage, type Command } from './args';
import { runCommand, succeeded } from './commands';
import { openContext, type DlqContext } from './context';
import { formatReport } from './format';
import { UsageError } from './queues';
import { EXIT, isUsageError } from '../cli/exit';
import { accessDeniedLine } from '../cli/access-denied';
import { RuntimeNotRunningError } from '../stack';
import type { ExampleTooling } from '../domain';
import { loadDomain } from '../load-domain';
import { takeToolingFlag } from '../cli/tooling-flag';
import { PROJECT_DIR } from '@exactly-once/cdk/project-dir';

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
  /** The domain the stack runs, as the entry point loaded it (`--tooling`, else the example's). */
  domain: ExampleTooling;
  open?: (command: Exclude<Command, { command: 'help' }>, domain: ExampleTooling) => Promise<DlqContext>;
}

export async function main(argv: string[], io: CliIo): Promise<number> {
  const USAGE = usage(io.domain.consumers);
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
    context = await (io.open ?? openContext)(command, io.domain);
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
  // The domain, once: `--tooling` names its module, else the example's.
  let domain: ExampleTooling;
  let argv: string[];
  try {
    const { toolingModule, args } = takeToolingFlag(process.argv.slice(2));
    argv = args;
    domain = loadDomain(PROJECT_DIR, { toolingModule });
  } catch (error) {
    process.stderr.write(`dlq: ${(error as Error).message}\n`);
    process.exit(isUsageError(error) ? EXIT.usage : EXIT.failed);
  }
  void main(argv, {
    domain,
    out: (text) => {
      if (drawn) process.stderr.write('\n');
      drawn = false;
      process.stdout.write(`${text}\n`);
    },
    err: (text) => process.stderr.write(`${text}\n`),
    progress,
  }).then((code) => process.exit(code));
}
