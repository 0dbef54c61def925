import { parseArgs } from 'node:util';
import { POISON_CAUSE } from './causes';
import { PAST_HORIZON_RUNBOOK } from './horizon';
import type { ProviderCallFinding } from './provider-window';
import { UsageError } from './queues';

import { toolingFlagHelp } from '../cli/tooling-flag';

/** The DLQs a stack of `consumers` has, by the names `list` gives them. */
const queueNames = (consumers: readonly { readonly name: string }[]): string =>
  [...consumers.map((c) => c.name), 'relay-failures', 'sweeper'].join(', ');

/** The tool's usage, naming the queues of the domain's `consumers`. */
export const usage = (
  consumers: readonly { readonly name: string }[],
): string => `Usage: npm run dlq -- <command> [options]
  list                                  every DLQ of the stack: messages, oldest age, counts by failureCause,
                                        how many are past the consumer's dedupe horizon, where redrive sends them
  show <queue> [--max N]                the messages (default 10) with their attributes and a body preview;
                                        nothing is consumed. For a consumer: each event's occurredAt and age
                                        against the consumer's dedupe horizon. For relay-failures: the stream
                                        range each record points at and which outbox items are still pending
  redrive <queue> [--max N | --all] [--cause C] [--include-poison] [--past-horizon ID,...]
          [--provider-performed ID,...] [--provider-not-performed ID,...] [--dry-run]
                                        moves at most N messages (default 10) back to their source queue;
                                        poison (SchemaViolation) stays unless --include-poison; an event past
                                        the consumer's dedupe horizon stays unless --past-horizon names it.
                                        On AWS, --all --include-poison without --cause is one
                                        StartMessageMoveTask, but only for a consumer without a dedupe horizon
                                        (it moves every body as it is). relay-failures: marks the pending
                                        outbox items for the sweeper
Options:
  --stack NAME     a deployed stack (outputs from CloudFormation, your AWS credentials);
                   default: the local runtime's .local/outputs.json (npm start)
  --json           machine-readable output on stdout
  --past-horizon ID,...
                   redrive: resend these events, past the dedupe horizon, with occurredAt set to now (the original
                   kept in the message attribute originalOccurredAt), so that the consumer applies each one once;
                   only after checking that the effect was NOT applied (its inbox claim may be gone, so the consumer cannot tell)
                   in the effects table, in the provider's log under <consumer>:<eventId> and in the inbox item
                   INBOX#<consumer>#<eventId>. If it was applied, do not redrive it: delete it or let it expire.
                   Repeat the flag or separate the ids with commas. The procedure:
                   ${PAST_HORIZON_RUNBOOK}
  --provider-performed ID,...  /  --provider-not-performed ID,...
                   redrive: events dead-lettered with ProviderKeyWindowPassed (their provider call owed past the
                   provider's key window) that you checked at the provider, under the key <consumer>:<eventId>:
                   performed: the call is recorded done, and the redriven message calls nothing;
                   not performed: its key window restarts now, and the redriven message makes the call once more.
                   Every other such message stays in the DLQ. Repeat the flag or separate the ids with commas
  --dry-run        redrive: what would be moved, rewritten and left, without moving anything
  ${toolingFlagHelp(17)}
  -h, --help       this text
<queue> is a name from \`list\` (${queueNames(consumers)}), its output key or its URL.
Exit codes: 0 done, 1 something failed (the output says what), 2 usage error, 3 the local runtime is not running.`;

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
      /** --past-horizon: eventIds past the horizon whose effect a person checked was NOT applied. */
      pastHorizon: string[];
      /** --provider-performed / --provider-not-performed: ProviderKeyWindowPassed events a person checked at the provider. */
      providerFindings: Record<string, ProviderCallFinding>;
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

/**
 * --past-horizon's eventIds, comma-separated or repeated. Named one by one on
 * purpose: each is an event a person checked by hand, so there is no "all".
 */
function eventIds(
  values: string[] | undefined,
  flag = '--past-horizon',
  what = 'whose effect you checked was NOT applied',
): string[] {
  const ids = (values ?? []).flatMap((value) => value.split(',')).map((id) => id.trim());
  if (values !== undefined && (ids.length === 0 || ids.some((id) => id === '')))
    throw new UsageError(`${flag} needs the eventIds ${what}, comma-separated (an empty one was given)`);
  return [...new Set(ids)];
}

/** The two provider findings by eventId; one event cannot be both. */
function providerFindings(
  performed: string[] | undefined,
  notPerformed: string[] | undefined,
): Record<string, ProviderCallFinding> {
  const yes = eventIds(performed, '--provider-performed', 'whose provider call you found performed at the provider');
  const no = eventIds(
    notPerformed,
    '--provider-not-performed',
    'whose provider call you found NOT performed at the provider',
  );
  const both = yes.filter((id) => no.includes(id));
  if (both.length > 0)
    throw new UsageError(`${both[0]} is named both --provider-performed and --provider-not-performed`);
  return {
    ...Object.fromEntries(yes.map((id) => [id, 'performed' as const])),
    ...Object.fromEntries(no.map((id) => [id, 'not-performed' as const])),
  };
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
        'past-horizon': { type: 'string', multiple: true },
        'provider-performed': { type: 'string', multiple: true },
        'provider-not-performed': { type: 'string', multiple: true },
        'dry-run': { type: 'boolean', default: false },
        help: { type: 'boolean', short: 'h', default: false },
      },
    });
  } catch (error) {
    // Node's own text goes on to suggest '-- "--flag"' for a positional: not what a mistyped flag needs.
    throw new UsageError((error as Error).message.split('. To specify a positional')[0]);
  }
  const { values, positionals } = parsed;
  if (values.help) return { command: 'help' };
  const [command, queue, ...extra] = positionals;
  const common = { stack: values.stack, json: values.json ?? false };
  if (values.stack !== undefined && values.stack.trim() === '') throw new UsageError('--stack needs a stack name');
  const redriveOnly = (
    [
      'all',
      'cause',
      'include-poison',
      'past-horizon',
      'provider-performed',
      'provider-not-performed',
      'dry-run',
    ] as const
  ).filter((name) => values[name] !== undefined && values[name] !== false);
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
      if (values.cause === POISON_CAUSE && !values['include-poison'])
        throw new UsageError(
          `${POISON_CAUSE} is poison: it fails again on every redrive. Add --include-poison to move it anyway`,
        );
      return {
        command: 'redrive',
        queue,
        max: positiveInteger(values.max, '--max'),
        all: values.all ?? false,
        cause: values.cause,
        includePoison: values['include-poison'] ?? false,
        pastHorizon: eventIds(values['past-horizon']),
        providerFindings: providerFindings(values['provider-performed'], values['provider-not-performed']),
        dryRun: values['dry-run'] ?? false,
        ...common,
      };
    }
    default:
      throw new UsageError(`Unknown command "${command}": use list, show or redrive`);
  }
}
