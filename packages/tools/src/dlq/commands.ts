import type { Command } from './args';
import type { DlqContext } from './context';
import { causeOf } from './causes';
import { eventKeyOf, inventory, type QueueInventory } from './inventory';
import { discardFailedRuns, eventIdOf, peek, receive, redrive, type DeadLetter, type RedriveResult } from './messages';
import { judgeHorizon, type HorizonJudgement } from './horizon';
import { recordFindingOnLedger, type ProviderCallFinding } from './provider-window';
import { discoverDeadLetterQueues, findDeadLetterQueue, UsageError, type DeadLetterQueue } from './queues';
import {
  explainPointer,
  redrivePointers,
  type PointerExplanation,
  type PointerRedrive,
  type StreamContext,
} from './stream-pointers';
import { requiredOutput } from '../stack';
import { STACK_OUTPUTS } from '@exactly-once/runtime/stack-outputs';

/** What each command found or did: printed as text, or as JSON with --json. */
export interface ListReport {
  command: 'list';
  stack: string;
  target: 'local' | 'aws';
  queues: (Pick<DeadLetterQueue, 'name' | 'url' | 'kind' | 'fifo' | 'redrivesTo' | 'dedupeHorizonSeconds'> &
    QueueInventory)[];
}

/**
 * A message as `show` reports it. For a consumer DLQ it is judged against the
 * consumer's dedupe horizon (horizon.ts): `occurredAt`, `ageSeconds`,
 * `dedupeHorizonSeconds` and `horizon` ('past' | 'within' | 'unknown').
 */
export interface ShownMessage extends Partial<HorizonJudgement> {
  messageId: string;
  sentAt?: string;
  groupId?: string;
  cause: string;
  consumer?: string;
  attempt?: string;
  eventId?: string;
  originalMessageId?: string;
  attributes: Record<string, string>;
  bodyPreview: string;
  /** Which copy of its event this message is among those shown, and how many there are (1 of 1: the only one). */
  copy?: { of: number; index: number };
}

export interface ShowReport {
  command: 'show';
  queue: string;
  kind: DeadLetterQueue['kind'];
  messages: ShownMessage[];
  /** relay-failures only: what each record points at. */
  pointers?: PointerExplanation[];
}

export interface RedriveReport {
  command: 'redrive';
  queue: string;
  dryRun: boolean;
  result?: RedriveResult;
  /** relay-failures only. */
  pointers?: PointerRedrive[];
}

export type Report = ListReport | ShowReport | RedriveReport;

/** Sample per queue for `list` counts; the message count itself comes from SQS. */
export const LIST_SAMPLE = 100;
const PREVIEW_CHARS = 160;

function waitSeconds(context: DlqContext): number {
  return context.stack.kind === 'aws' ? 1 : 0;
}

function streamContext(context: DlqContext): StreamContext {
  return {
    sqs: context.sqs,
    dynamodb: context.dynamodb,
    streams: context.streams,
    outboxTableName: requiredOutput(context.stack.outputs, context.domain.outboxTableOutput),
  };
}

/** A message as `show` reports it; with `horizon` (a consumer DLQ), judged against the consumer's dedupe horizon. */
export function shown(
  message: DeadLetter,
  horizon?: { dedupeHorizonSeconds: number | undefined; now: Date },
): ShownMessage {
  const { consumer, attempt, originalMessageId } = message.attributes;
  return {
    messageId: message.messageId,
    sentAt: message.sentAt,
    groupId: message.groupId,
    cause: causeOf(message),
    consumer,
    attempt,
    eventId: eventIdOf(message.body),
    originalMessageId: originalMessageId ?? message.messageId,
    attributes: message.attributes,
    bodyPreview: message.body.length > PREVIEW_CHARS ? `${message.body.slice(0, PREVIEW_CHARS)}...` : message.body,
    ...(horizon === undefined ? {} : judgeHorizon(message.body, horizon.dedupeHorizonSeconds, horizon.now)),
  };
}

/** Each message shown, numbered among the copies of its event (eventKeyOf) that were read. */
function withCopies(messages: readonly DeadLetter[], show: (m: DeadLetter) => ShownMessage): ShownMessage[] {
  const counts = new Map<string, number>();
  for (const m of messages) counts.set(eventKeyOf(m), (counts.get(eventKeyOf(m)) ?? 0) + 1);
  const seen = new Map<string, number>();
  return messages.map((m) => {
    const key = eventKeyOf(m);
    const index = (seen.get(key) ?? 0) + 1;
    seen.set(key, index);
    return { ...show(m), copy: { of: counts.get(key) ?? 1, index } };
  });
}

/** Whether the command did all it was asked (exit code 0) or something failed (1). */
export function succeeded(report: Report): boolean {
  if (report.command !== 'redrive') return true;
  if ((report.result?.failed.length ?? 0) > 0) return false;
  return (report.pointers ?? []).every((p) => p.error === undefined);
}

/** Runs one command (list, show or redrive) against the stack's DLQs: its report. */
export async function runCommand(
  command: Exclude<Command, { command: 'help' }>,
  context: DlqContext,
  progress: (line: string) => void = () => undefined,
  now: () => Date = () => new Date(),
): Promise<Report> {
  const { consumers } = context.domain;
  const queues = discoverDeadLetterQueues(context.stack.outputs, consumers);
  if (command.command === 'list') return listQueues(queues, context, now);
  const queue = findDeadLetterQueue(queues, command.queue, consumers);
  if (command.command === 'show') return showMessages(command, queue, context, now);
  return redriveQueue(command, queue, context, progress, now);
}

async function listQueues(
  queues: readonly DeadLetterQueue[],
  context: DlqContext,
  now: () => Date,
): Promise<ListReport> {
  const rows = [];
  for (const queue of queues) {
    const found = await inventory(context.sqs, queue.url, LIST_SAMPLE, {
      waitSeconds: waitSeconds(context),
      now: now(),
      dedupeHorizonSeconds: queue.dedupeHorizonSeconds,
    });
    rows.push({
      name: queue.name,
      url: queue.url,
      kind: queue.kind,
      fifo: queue.fifo,
      redrivesTo: queue.redrivesTo,
      ...(queue.dedupeHorizonSeconds === undefined ? {} : { dedupeHorizonSeconds: queue.dedupeHorizonSeconds }),
      ...found,
    });
  }
  return { command: 'list', stack: context.stack.name, target: context.stack.kind, queues: rows };
}

async function showMessages(
  command: Extract<Command, { command: 'show' }>,
  queue: DeadLetterQueue,
  context: DlqContext,
  now: () => Date,
): Promise<ShowReport> {
  const messages = await peek(context.sqs, queue.url, command.max, { waitSeconds: waitSeconds(context) });
  const at = now();
  const horizon = queue.kind === 'consumer' ? { dedupeHorizonSeconds: queue.dedupeHorizonSeconds, now: at } : undefined;
  const report: ShowReport = {
    command: 'show',
    queue: queue.name,
    kind: queue.kind,
    messages: withCopies(messages, (m) => shown(m, horizon)),
  };
  if (queue.kind === 'stream-pointers') {
    report.pointers = [];
    for (const message of messages) report.pointers.push(await explainPointer(streamContext(context), message));
  }
  return report;
}

async function redriveQueue(
  command: Extract<Command, { command: 'redrive' }>,
  queue: DeadLetterQueue,
  context: DlqContext,
  progress: (line: string) => void,
  now: () => Date,
): Promise<RedriveReport> {
  if (command.pastHorizon.length > 0 && queue.kind !== 'consumer')
    throw new UsageError(`--past-horizon is for a consumer's DLQ: ${queue.name} holds no events to resend`);
  if (command.pastHorizon.length > 0 && queue.dedupeHorizonSeconds === undefined)
    throw new UsageError(
      `--past-horizon: the stack outputs no dedupe horizon for ${queue.name} (deployed before consumers had one), so nothing is past it`,
    );
  const findings = Object.keys(command.providerFindings);
  if (findings.length > 0 && queue.kind !== 'consumer')
    throw new UsageError(`--provider-performed/--provider-not-performed are for a consumer's DLQ, not ${queue.name}`);
  if (findings.length > 0 && queue.ledger === undefined)
    throw new UsageError(
      `--provider-performed/--provider-not-performed: ${queue.name} is not on the consumer list, so the tool cannot tell which ledger (inbox or sequenced) holds its claims; nothing was recorded or moved`,
    );
  const effectsTable = context.stack.outputs[STACK_OUTPUTS.effectsTableName];
  if (findings.length > 0 && effectsTable === undefined)
    throw new UsageError('The stack outputs no EffectsTableName: there is no ledger to record the finding on');
  const options = {
    max: command.max,
    all: command.all,
    cause: command.cause,
    includePoison: command.includePoison,
    isEvent: context.domain.isEvent,
    pastHorizon: command.pastHorizon,
    providerFindings: command.providerFindings,
    // The consumer's claims are keyed by its spec name, which is its DLQ's name here; its spec's ledger
    // says whether the call is owed on the event's inbox entry or on its entity item.
    recordFinding: (event: { eventId: string; tenant?: string; entityId?: string }, finding: ProviderCallFinding) =>
      recordFindingOnLedger(
        context.dynamodb,
        { table: effectsTable!, consumer: queue.name, ledger: queue.ledger, ...event },
        finding,
        now(),
      ),
    dryRun: command.dryRun,
    onAws: context.stack.kind === 'aws',
    waitSeconds: waitSeconds(context),
    now,
    onProgress: ({ moved, skipped, failed }: { moved: number; skipped: number; failed: number }) =>
      progress(
        `${queue.name}: ${moved} ${command.dryRun ? 'would move' : 'moved'}, ${skipped} skipped, ${failed} failed`,
      ),
  };
  const report: RedriveReport = { command: 'redrive', queue: queue.name, dryRun: command.dryRun };
  if (queue.kind === 'consumer') report.result = await redrive(context.sqs, queue, options);
  else if (queue.kind === 'async-invoke') report.result = await discardFailedRuns(context.sqs, queue, options);
  else {
    const limit = command.all ? Number.POSITIVE_INFINITY : command.max;
    const pointers: PointerRedrive[] = [];
    for (;;) {
      const batch = await receive(context.sqs, queue.url, Math.min(10, limit - pointers.length), waitSeconds(context));
      if (batch.length === 0) break;
      pointers.push(...(await redrivePointers(streamContext(context), queue.url, batch, { dryRun: command.dryRun })));
      progress(`${queue.name}: ${pointers.length} record(s) done`);
      if (pointers.length >= limit || command.dryRun) break; // a dry run released its batch: it would read it again
    }
    report.pointers = pointers;
  }
  return report;
}
