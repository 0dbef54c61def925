import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { PROVIDER_CALL_LEASE_HOLDER_ATTRIBUTE } from '@exactly-once/runtime/aws/inbox-table';
import type { RecordWork } from '@exactly-once/runtime/consumer/record-work';
import type { MemoryDynamoDb } from '../memory-dynamodb';
import type { Invocation } from './invocation';
import { EFFECTS_TABLE } from './tables';

/**
 * What the audit (audit.ts) needs to know that the tables, the provider log and the DLQs do not
 * record, watched while the schedule runs: forged copies that reached a queue, 2xx answers heard and
 * not recorded yet (a later send under their key is a `double-send`), and a try's own commit refused
 * to its retry (reported anything but applied, a `miscount`).
 */
export class AuditWatch {
  /** Per consumer and eventId, forged copies that reached a queue (the sender policy switched off). */
  readonly forged = new Set<string>();
  readonly doubleSends: string[] = [];
  readonly miscounts: string[] = [];
  /** Per provider key, the last 2xx a live invocation heard and had not recorded yet (see `double-send`). */
  private readonly answered = new Map<string, { invocation: Invocation; excused: boolean }>();
  /** Per lease holder (one try of one record): the claim its own retry was refused on, until the try ends. */
  private readonly ownCommitsRefused = new Map<string, string>();

  constructor(private readonly db: MemoryDynamoDb) {}

  /** A 2xx this invocation heard: it must record it (the done-mark) before anyone calls again. */
  heard(idempotencyKey: string, invocation: Invocation): void {
    this.answered.set(idempotencyKey, { invocation, excused: false });
  }

  /**
   * A call under a key whose last 2xx a live invocation heard and did not record, its done-mark cut
   * by something other than its own bound: a second send a keyless provider (SMTP) would act on,
   * with no crash to explain it.
   */
  checkNotSentAgain(idempotencyKey: string, caller: Invocation): void {
    const heard = this.answered.get(idempotencyKey);
    if (heard === undefined || heard.invocation === caller) return;
    const { invocation, excused } = heard;
    if (excused || invocation.crashed || invocation.timedOut) return;
    this.doubleSends.push(`${idempotencyKey}: sent again by ${caller.name} after ${invocation.name} heard its 2xx`);
    this.answered.delete(idempotencyKey);
  }

  /**
   * A done-mark's end: written, the provider's 2xx is on record; failed, the next copy calls again,
   * which is allowed only when it failed on its own bound (the batch had to answer) or the
   * invocation died; any other cut (the record's deadline) makes that next call a double send.
   */
  async watchDoneMark(key: string, invocation: Invocation, work: RecordWork | undefined, done: Promise<void>) {
    try {
      await done;
      this.answered.delete(key);
    } catch (error) {
      const heard = this.answered.get(key);
      if (heard?.invocation === invocation)
        heard.excused = work?.recordingSignal?.aborted === true || invocation.crashed || invocation.timedOut;
      throw error;
    }
  }

  /**
   * A claim this very try committed, refused to its own retry (the claim it failed on carries the try's
   * lease holder): noted, so the try's outcome can be judged (checkNotOwnCommit).
   */
  noteOwnCommitRefused(claim: string, key: Record<string, unknown>, work: RecordWork): void {
    const { Item } = this.db.execute(new GetCommand({ TableName: EFFECTS_TABLE, Key: key })) as {
      Item?: Record<string, unknown>;
    };
    if (Item?.[PROVIDER_CALL_LEASE_HOLDER_ATTRIBUTE] === work.leaseHolder)
      this.ownCommitsRefused.set(work.leaseHolder, claim);
  }

  /**
   * A ledger that reports its own try's commit a duplicate miscounts (EffectApplied and
   * DuplicateSuppressed are what the operators and the proof read): a try whose own claim was refused to
   * it must end `applied`.
   */
  checkNotOwnCommit(work: RecordWork, outcome: string): void {
    const claim = this.ownCommitsRefused.get(work.leaseHolder);
    if (claim === undefined) return;
    this.ownCommitsRefused.delete(work.leaseHolder);
    if (outcome !== 'applied')
      this.miscounts.push(`${claim} reported ${outcome} for its own commit (${work.leaseHolder})`);
  }
}
