import type { ListReport, Report, RedriveReport, ShowReport } from './commands';
import { days, describeHorizon } from './horizon';

/** The reports as an operator reads them in a terminal. */
export function formatReport(report: Report): string {
  if (report.command === 'list') return formatList(report);
  if (report.command === 'show') return formatShow(report);
  return formatRedrive(report);
}

function age(seconds: number | undefined): string {
  if (seconds === undefined) return '-';
  if (seconds < 120) return `${seconds}s`;
  if (seconds < 7200) return `${Math.round(seconds / 60)}m`;
  return `${Math.round(seconds / 3600)}h`;
}

function table(rows: string[][]): string {
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
  return rows
    .map((r) =>
      r
        .map((cell, i) => cell.padEnd(widths[i]))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

function formatList(report: ListReport): string {
  const rows = [['QUEUE', 'MESSAGES', 'IN FLIGHT', 'OLDEST', 'PAST HORIZON', 'BY CAUSE', 'REDRIVES TO']];
  for (const q of report.queues) {
    const causes = Object.entries(q.byCause)
      .map(([cause, n]) => `${cause}=${n}`)
      .join(' ');
    const sampled = q.sampled < q.messages ? ` (of ${q.sampled} read)` : '';
    // Copies of one event (a poison message in several crashed batches) count once as events.
    const events = q.events < q.sampled ? ` (${q.events} event${q.events === 1 ? '' : 's'} in ${q.sampled} read)` : '';
    rows.push([
      q.name,
      `${q.messages}${events}`,
      String(q.inFlight),
      age(q.oldestAgeSeconds),
      pastHorizon(q),
      (causes || '-') + sampled,
      q.redrivesTo,
    ]);
  }
  return `Stack ${report.stack} (${report.target})\n${table(rows)}`;
}

/** A consumer DLQ's count past its horizon (`2 (21 d)`); `?` without a horizon; `-` for other DLQs. */
function pastHorizon(q: ListReport['queues'][number]): string {
  if (q.kind !== 'consumer') return '-';
  if (q.pastHorizon === undefined || q.dedupeHorizonSeconds === undefined) return '?';
  return `${q.pastHorizon} (${days(q.dedupeHorizonSeconds)})`;
}

function formatShow(report: ShowReport): string {
  if (report.messages.length === 0) return `${report.queue}: empty`;
  const events = new Set(report.messages.map((m) => (m.eventId === undefined ? m.messageId : `${m.eventId}`))).size;
  const lines = [
    `${report.queue}: ${report.messages.length} message(s) shown${events < report.messages.length ? `, ${events} event(s): copies of one event are marked` : ''}, none consumed`,
  ];
  report.messages.forEach((m, i) => {
    lines.push('');
    lines.push(`${m.messageId}  sent ${m.sentAt ?? '?'}${m.groupId ? `  group ${m.groupId}` : ''}`);
    if (report.kind === 'consumer')
      lines.push(
        `  cause ${m.cause}  consumer ${m.consumer ?? '-'}  code ${m.attributes.codeVersion ?? '-'}  attempt ${m.attempt ?? '-'}  eventId ${m.eventId ?? '-'}  original ${m.originalMessageId}`,
      );
    if (m.copy !== undefined && m.copy.of > 1) lines.push(`  copy ${m.copy.index} of ${m.copy.of} of this event here`);
    if (m.horizon !== undefined) lines.push(`  ${describeHorizon({ ...m, horizon: m.horizon })}`);
    if (m.attributes.failureMessage) lines.push(`  message ${m.attributes.failureMessage}`);
    const pointer = report.pointers?.[i];
    if (pointer?.pointer !== undefined) {
      const p = pointer.pointer;
      lines.push(
        `  stream pointer: shard ${p.shardId}, sequence ${p.startSequenceNumber}..${p.endSequenceNumber} (${p.batchSize ?? '?'} record(s), ${p.condition ?? 'failed'})`,
      );
    }
    if (pointer?.unreadable !== undefined) lines.push(`  outbox items: unknown (${pointer.unreadable})`);
    else if (pointer !== undefined) {
      const pending = pointer.items.filter((item) => item.state === 'pending');
      lines.push(`  outbox items: ${pointer.items.length}, still pending ${pending.length}`);
      for (const item of pointer.items)
        lines.push(`    ${item.state.padEnd(10)} ${item.type ?? ''} entity ${item.entityId} event ${item.eventId}`);
    } else lines.push(`  body ${m.bodyPreview}`);
  });
  return lines.join('\n');
}

const MOVE_VERBS = {
  move: ['moved', 'would move'],
  rewrite: ['rewrote and moved', 'would rewrite and move'],
} as const;

function formatRedrive(report: RedriveReport): string {
  const verb = report.dryRun ? 'would be' : '';
  const lines: string[] = [];
  if (report.pointers !== undefined) {
    const marked = report.pointers.flatMap((p) => p.marked);
    const dispatched = report.pointers.flatMap((p) => p.alreadyDispatched);
    lines.push(
      `${report.queue}: ${report.pointers.length} record(s); ${marked.length} pending outbox item(s) ${verb || ''} marked for the sweeper, ${dispatched.length} already dispatched`.replace(
        /\s+/g,
        ' ',
      ),
    );
    for (const p of report.pointers) {
      if (p.error !== undefined) lines.push(`  FAILED ${p.messageId}: ${p.error} (record kept)`);
      for (const eventId of p.marked) lines.push(`  marked ${eventId}`);
    }
    return lines.join('\n');
  }
  const result = report.result!;
  if (result.method === 'message-move-task') {
    return `${report.queue}: StartMessageMoveTask started for about ${result.approximateMessages} message(s); task ${result.taskHandle} (follow it with aws sqs list-message-move-tasks)`;
  }
  const action = result.method === 'discard' ? 'removed (the next scheduled run redoes them)' : 'moved';
  lines.push(
    `${report.queue}: ${result.moved.length} message(s) ${report.dryRun ? `would be ${action}` : action}, ${result.skipped.length} skipped, ${result.failed.length} failed`,
  );
  for (const m of result.moved) {
    const rewritten =
      m.originalOccurredAt === undefined
        ? ''
        : `, occurredAt ${m.originalOccurredAt} -> ${m.occurredAt} (the original kept in originalOccurredAt)`;
    const verb = MOVE_VERBS[m.originalOccurredAt === undefined ? 'move' : 'rewrite'][report.dryRun ? 1 : 0];
    const finding =
      m.providerFinding === undefined
        ? ''
        : m.providerFinding === 'performed'
          ? ', provider call recorded done (found performed): the consumer calls nothing'
          : ', provider key window restarted (found NOT performed): the consumer calls once more';
    lines.push(
      `  ${verb} ${m.messageId} eventId ${m.eventId ?? '-'}${m.groupId ? ` group ${m.groupId}` : ''} (${m.cause})${rewritten}${finding}`,
    );
  }
  const reasons = new Map<string, number>();
  for (const s of result.skipped) reasons.set(s.reason, (reasons.get(s.reason) ?? 0) + 1);
  for (const [reason, n] of reasons) lines.push(`  skipped ${n}: ${reason}`);
  for (const f of result.failed) lines.push(`  FAILED ${f.messageId}: ${f.error}`);
  const horizon = result.horizon;
  if (horizon !== undefined && (horizon.leftPastHorizon > 0 || horizon.rewritten > 0 || horizon.notSeen.length > 0))
    lines.push(
      `  dedupe horizon ${days(horizon.dedupeHorizonSeconds)}: ${horizon.leftPastHorizon} message(s) past it ${report.dryRun ? 'would be left' : 'left'} in the DLQ, ${horizon.rewritten} ${report.dryRun ? 'would be resent' : 'resent'} with a fresh occurredAt`,
    );
  if (horizon !== undefined && horizon.notSeen.length > 0)
    lines.push(
      `  --past-horizon named events not seen past the horizon in this pass (within it, elsewhere, or beyond --max): ${horizon.notSeen.join(', ')}`,
    );
  return lines.join('\n');
}
