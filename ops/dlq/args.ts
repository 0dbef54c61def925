import { parseArgs } from 'node:util';
import { CONSUMERS } from '../../lambdas/consumers';
import { UsageError } from './queues';

const QUEUE_NAMES = [...CONSUMERS.map((c) => c.name), 'relay-failures', 'sweeper'].join(', ');

export const USAGE = `Usage: npm run dlq -- <command> [options]
  list                                  every DLQ of the stack: messages, oldest age, counts by failureCause,
                                        and where redrive sends them
  show <queue> [--max N]                the messages (default 10) with their attributes and a body preview;
                                        nothing is consumed. For relay-failures: the stream range each record
                                        points at and which outbox items are still pending
  redrive <queue> [--max N | --all] [--cause C] [--include-poison] [--dry-run]
                                        moves at most N messages (default 10) back to their source queue;
                                        poison (SchemaViolation) stays unless --include-poison. On AWS,
                                        --all --include-poison without --cause is one StartMessageMoveTask.
                                        relay-failures: marks the pending outbox items for the sweeper
Options:
  --stack NAME     a deployed stack (outputs from CloudFormation, your AWS credentials);
                   default: the local runtime's .local/outputs.json (npm start)
  --json           machine-readable output on stdout
  -h, --help       this text
<queue> is a name from \`list\` (${QUEUE_NAMES}), its output key or its URL.
Exit codes: 0 done, 1 something failed (the output says what), 2 usage error.`;

export type Command =
  | { command: 'help' }
  | { command: 'list'; stack?: string; json: boolean }
  | { command: 'show'; queue: string; max: number; stack?: string; json: boolean }
  | {
      command: 'redrive';
      queue: string;
      max: number;
      all: boolean;
      cause?: string;
      includePoison: boolean;
      dryRun: boolean;
      stack?: string;
      json: boolean;
    };

export const DEFAULT_MAX = 10;

function positiveInteger(value: string | undefined, name: string): number {
  if (value === undefined) return DEFAULT_MAX;
  if (!/^[1-9]\d*$/.test(value)) throw new UsageError(`${name} must be a positive whole number, got "${value}"`);
  return Number(value);
}

/** The command line, checked completely before anything is read or moved. */
export function parseCommand(argv: string[]): Command {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      strict: true,
      options: {
        stack: { type: 'string' },
        json: { type: 'boolean', default: false },
        max: { type: 'string' },
        all: { type: 'boolean', default: false },
        cause: { type: 'string' },
        'include-poison': { type: 'boolean', default: false },
        'dry-run': { type: 'boolean', default: false },
        help: { type: 'boolean', short: 'h', default: false },
      },
    });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  const { values, positionals } = parsed;
  if (values.help) return { command: 'help' };
  const [command, queue, ...extra] = positionals;
  const common = { stack: values.stack, json: values.json ?? false };
  if (values.stack !== undefined && values.stack.trim() === '') throw new UsageError('--stack needs a stack name');
  const redriveOnly = (['all', 'cause', 'include-poison', 'dry-run'] as const).filter(
    (name) => values[name] !== undefined && values[name] !== false,
  );
  switch (command) {
    case undefined:
      throw new UsageError('A command is required: list, show or redrive');
    case 'list':
      if (queue !== undefined) throw new UsageError(`list takes no queue, got "${queue}"`);
      if (values.max !== undefined || redriveOnly.length > 0)
        throw new UsageError(`list takes only --stack and --json`);
      return { command: 'list', ...common };
    case 'show':
      if (queue === undefined) throw new UsageError('show needs a queue: npm run dlq -- show <queue>');
      if (extra.length > 0) throw new UsageError(`Unexpected argument "${extra[0]}"`);
      if (redriveOnly.length > 0) throw new UsageError(`--${redriveOnly[0]} is a redrive option`);
      return { command: 'show', queue, max: positiveInteger(values.max, '--max'), ...common };
    case 'redrive': {
      if (queue === undefined) throw new UsageError('redrive needs a queue: npm run dlq -- redrive <queue>');
      if (extra.length > 0) throw new UsageError(`Unexpected argument "${extra[0]}"`);
      if (values.all && values.max !== undefined) throw new UsageError('--all and --max exclude each other');
      if (values.cause !== undefined && values.cause.trim() === '')
        throw new UsageError('--cause needs a failureCause');
      if (values.cause === 'SchemaViolation' && !values['include-poison'])
        throw new UsageError(
          'SchemaViolation is poison: it fails again on every redrive. Add --include-poison to move it anyway',
        );
      return {
        command: 'redrive',
        queue,
        max: positiveInteger(values.max, '--max'),
        all: values.all ?? false,
        cause: values.cause,
        includePoison: values['include-poison'] ?? false,
        dryRun: values['dry-run'] ?? false,
        ...common,
      };
    }
    default:
      throw new UsageError(`Unknown command "${command}": use list, show or redrive`);
  }
}
