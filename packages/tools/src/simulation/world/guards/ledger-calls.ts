import { AsyncLocalStorage } from 'node:async_hooks';
import { TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { TransactWriteCommand, UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import {
  inboxKey,
  PROVIDER_CALL_DONE_ATTRIBUTE,
  PROVIDER_CALL_LEASE_ATTRIBUTE,
  PROVIDER_CALL_LEASE_HOLDER_ATTRIBUTE,
  SUPERSEDED_BY_ATTRIBUTE,
} from '@exactly-once/runtime/aws/inbox-table';
import { providerKey } from '@exactly-once/runtime/consumer-spec';
import { DeadlineExceeded, type RecordWork } from '@exactly-once/runtime/consumer/record-work';
import type { EventRef } from '@exactly-once/runtime/inbox/ports';
import type { AuditWatch } from '../audit-watch';
import type { Invocation } from '../invocation';
import type { MechanismGuards } from '../options';
import { keyAsSent, type Release } from '../releases';

/**
 * The record a consumer's use case is applying (its event, its work and the SQS message it came in): set
 * around each record by the simulation's consumer wiring, read by the guard switches below the ledgers.
 */
export const applying = new AsyncLocalStorage<{ event: EventRef; work: RecordWork; messageId: string }>();

type LedgerCallGuards = Pick<
  MechanismGuards,
  'dedupeOn' | 'providerCompletion' | 'providerCallLease' | 'doneMarkBound' | 'ownCommit'
>;

/**
 * Guard switches below the ledgers, test-only, on the calls a consumer's ledger sends for the record
 * it is applying: key the record's inbox entry on the SQS messageId instead of the producer's eventId
 * (`dedupeOn`: its claim, lease, done-mark and stale mark); and/or let every duplicate call the provider
 * again (`providerCompletion`: the failed claim answers without `providerCallDoneAt` and `supersededBy`,
 * and every lease is granted unasked); and/or grant every lease unasked (`providerCallLease`); and/or
 * send the done-mark under the record's deadline (`doneMarkBound`). And what the ledger is answered,
 * watched: a claim that failed on its own try's commit is a miscount; a done-mark that failed is
 * remembered for the `double-send` check. Every other call goes through as sent.
 */
export function guardedDocuments(
  invocation: Invocation,
  consumer: string,
  release: Release,
  guards: LedgerCallGuards,
  watch: AuditWatch,
): DynamoDBDocumentClient {
  const { dedupeOn, providerCompletion, providerCallLease, doneMarkBound } = guards;
  const documents = invocation.documents;
  const alwaysGranted = !providerCompletion || !providerCallLease;
  const send = (command: unknown, options?: { abortSignal?: AbortSignal }): Promise<unknown> => {
    const record = applying.getStore();
    if (record === undefined) return documents.send(command as never, options);
    const own = inboxKey(consumer, record.event.eventId, record.event.tenant);
    const rekeyed = dedupeOn === 'eventId' ? own : inboxKey(consumer, record.messageId, record.event.tenant);
    if (command instanceof TransactWriteCommand) {
      const [first, ...effects] = command.input.TransactItems ?? [];
      const claim = first?.Put;
      if (claim?.Item?.pk !== own.pk) return documents.send(command, options);
      const sent =
        dedupeOn === 'eventId'
          ? command
          : new TransactWriteCommand({
              ...command.input,
              TransactItems: [
                { Put: { ...claim, Item: { ...claim.Item, ...rekeyed, eventId: record.messageId } } },
                ...effects,
              ],
            });
      const eventId = dedupeOn === 'eventId' ? record.event.eventId : record.messageId;
      return documents.send(sent, options).catch((error: unknown) => {
        throw claimRefused(`${consumer}: ${eventId}`, rekeyed, record.work, error, guards, watch);
      });
    }
    // A sequenced ledger's done-mark (this event's owed call removed from its entity item): watched as the inbox's.
    if (command instanceof UpdateCommand && isSequencedDoneMark(command, record.event.eventId)) {
      const signal = doneMarkBound ? options?.abortSignal : underDeadline(record.work, invocation).signal;
      return watch.watchDoneMark(
        keyAsSent(release, consumer, record.event, providerKey(consumer, record.event)),
        invocation,
        record.work,
        documents.send(command, { abortSignal: signal }).then(() => undefined),
      );
    }
    if (!(command instanceof UpdateCommand) || command.input.Key?.pk !== own.pk)
      return documents.send(command as never, options);
    const names = Object.values(command.input.ExpressionAttributeNames ?? {});
    const lease = names.includes(PROVIDER_CALL_LEASE_ATTRIBUTE);
    const take = lease && String(command.input.UpdateExpression).startsWith('SET');
    if (take && alwaysGranted) return Promise.resolve({});
    const sent = dedupeOn === 'eventId' ? command : new UpdateCommand({ ...command.input, Key: rekeyed });
    if (lease || !names.includes(PROVIDER_CALL_DONE_ATTRIBUTE)) return documents.send(sent, options);
    const { work } = record;
    const signal = doneMarkBound ? options?.abortSignal : underDeadline(work, invocation).signal;
    return watch.watchDoneMark(
      keyAsSent(release, consumer, record.event, providerKey(consumer, record.event)),
      invocation,
      work,
      documents.send(sent, { abortSignal: signal }).then(() => undefined),
    );
  };
  return { send } as unknown as DynamoDBDocumentClient;
}

/** SequencedLedger.recordProviderCallDone for `eventId`: its owed-call slot removed, on this event's claim. */
function isSequencedDoneMark(command: UpdateCommand, eventId: string): boolean {
  const { UpdateExpression, ExpressionAttributeNames: names, ExpressionAttributeValues: values } = command.input;
  if (!String(UpdateExpression).startsWith('REMOVE #call') || names?.['#call'] === undefined) return false;
  return names['#call'] === `owedCall#${eventId}` || (names['#call'] === 'owedCall' && values?.[':id'] === eventId);
}

/**
 * A claim's transaction failed: on the claim itself (a duplicate), the entry it failed on is read.
 * Without provider completion, that entry is answered without its done-mark and supersede mark, so the
 * ledger takes the call as still owed. Without the own-holder rule (`ownCommit`), without its lease
 * holder. Returns the error to throw.
 */
function claimRefused(
  claim: string,
  key: Record<string, unknown>,
  work: RecordWork,
  error: unknown,
  guards: LedgerCallGuards,
  watch: AuditWatch,
): unknown {
  if (!(error instanceof TransactionCanceledException)) return error;
  const [reason] = error.CancellationReasons ?? [];
  if (reason?.Code !== 'ConditionalCheckFailed') return error;
  watch.noteOwnCommitRefused(claim, key, work);
  // Without the own-holder rule: the ledger cannot tell its own commit from another try's claim.
  if (!guards.ownCommit && reason.Item !== undefined) delete reason.Item[PROVIDER_CALL_LEASE_HOLDER_ATTRIBUTE];
  if (!guards.providerCompletion && reason.Item !== undefined) {
    delete reason.Item[PROVIDER_CALL_DONE_ATTRIBUTE];
    delete reason.Item[SUPERSEDED_BY_ATTRIBUTE];
  }
  return error;
}

/** The work of a done-mark as the code before its own bound ran it: aborted at the record's deadline. */
function underDeadline(work: RecordWork, invocation: Invocation): RecordWork {
  const deadline = new AbortController();
  invocation.timer(Math.max(0, work.deadline - Date.now()), () => deadline.abort(new DeadlineExceeded(work.deadline)));
  return { ...work, signal: deadline.signal };
}
