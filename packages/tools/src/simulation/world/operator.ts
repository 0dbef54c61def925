import { DeleteCommand } from '@aws-sdk/lib-dynamodb';
import { INBOX_TTL_ATTRIBUTE } from '@exactly-once/runtime/aws/inbox-table';
import type { Item } from '../memory-dynamodb';
import type { SimulationOptions } from './options';
import { EPOCH_MS } from './scheduler';
import { EFFECTS_TABLE } from './tables';
import type { EngineState } from './engine-state';
import type { World } from './world';

const DAY_MS = 86_400_000;
/** Long runs: how often the simulated DynamoDB TTL looks for expired items, and how late it may delete one. */
const TTL_SWEEP_EVERY_MS = 3_600_000;
const DEFAULT_TTL_DELETION_DELAY_SECONDS = 2 * 86_400;

/**
 * The operator and the clock's long reach: the operator's DLQ redrives (once, an hour after the last
 * intent, or every few days in long runs), and DynamoDB's TTL deleting expired inbox claims (long runs
 * only), which is what the dedupe horizon is for.
 */
export class Operator {
  /** The operator's redrives still to come, and when the next one is. */
  redrivesLeft = 0;
  redriveAt = 0;
  /** Effects items DynamoDB's TTL deleted (long runs only), by pk: the last image of each. */
  readonly ttlDeleted = new Map<string, Item>();
  /** When the TTL deletes each expired item it has seen (drawn once per item and expiry). */
  private readonly ttlDeleteAt = new Map<string, number>();

  constructor(
    private readonly world: World<SimulationOptions>,
    private readonly engine: EngineState,
  ) {}

  /** Schedules the operator's redrives; returns when they are (virtual ms). */
  scheduleRedrives(arrivalsMs: number): number[] {
    const redrives = this.redriveTimes(arrivalsMs);
    this.redrivesLeft = redrives.length;
    this.redriveAt = redrives[0] ?? 0;
    for (const at of redrives) this.world.scheduler.at(at, () => this.redrive(redrives));
    return redrives;
  }

  /** DynamoDB's TTL on the Effects table, in long runs only. */
  scheduleTtl(): void {
    const { longRedrive } = this.world.options;
    if (longRedrive !== undefined)
      this.world.scheduler.at(TTL_SWEEP_EVERY_MS, () =>
        this.sweepTtl(longRedrive.ttlDeletionDelaySeconds ?? DEFAULT_TTL_DELETION_DELAY_SECONDS),
      );
  }

  /**
   * When the operator redrives the DLQs (virtual ms): `longRedrive`'s every
   * few days, or once, `redriveDlqsAfterSeconds` after the last intent arrived.
   */
  private redriveTimes(arrivalsMs: number): number[] {
    const { longRedrive, redriveDlqsAfterSeconds } = this.world.options;
    if (longRedrive !== undefined)
      return Array.from(
        { length: longRedrive.redrives },
        (_, k) => arrivalsMs + (k + 1) * longRedrive.everyDays * DAY_MS,
      );
    return redriveDlqsAfterSeconds === undefined ? [] : [arrivalsMs + redriveDlqsAfterSeconds * 1000];
  }

  /** The operator's redrive of every consumer's DLQ: each message goes back to its queue as a new message. */
  private redrive(redrives: readonly number[]): void {
    this.redrivesLeft -= 1;
    this.redriveAt = redrives[redrives.length - this.redrivesLeft] ?? 0;
    let moved = 0;
    for (const { queue, deadLetterQueue } of this.world.consumers.values()) moved += deadLetterQueue.redriveTo(queue);
    this.world.scheduler.fault('dlq-redrive', `${moved} messages back to their queues`);
  }

  /**
   * DynamoDB's TTL on the Effects table (long runs only): every hour, each
   * item whose `expiresAt` (epoch seconds) has passed gets a deletion time,
   * drawn once, up to `maxDelaySeconds` after its expiry (late, never early),
   * and is deleted once that time has come, if it still carries the same
   * expiry. A delete is a write like any other (the stream would see it).
   */
  private sweepTtl(maxDelaySeconds: number): void {
    const { world } = this;
    if (this.engine.stopped) return;
    const now = EPOCH_MS + world.scheduler.now;
    for (const item of world.db.items(EFFECTS_TABLE)) {
      const expiresAt = item[INBOX_TTL_ATTRIBUTE];
      if (typeof expiresAt !== 'number' || expiresAt * 1000 > now) continue;
      const id = `${String(item.pk)}\n${String(item.sk)}\n${expiresAt}`;
      let deleteAt = this.ttlDeleteAt.get(id);
      if (deleteAt === undefined) {
        deleteAt = expiresAt * 1000 + world.scheduler.between(0, maxDelaySeconds * 1000);
        this.ttlDeleteAt.set(id, deleteAt);
      }
      if (deleteAt > now) continue;
      this.ttlDeleteAt.delete(id);
      try {
        world.db.execute(
          new DeleteCommand({
            TableName: EFFECTS_TABLE,
            Key: { pk: item.pk, sk: item.sk },
            ConditionExpression: '#ttl = :ttl',
            ExpressionAttributeNames: { '#ttl': INBOX_TTL_ATTRIBUTE },
            ExpressionAttributeValues: { ':ttl': expiresAt },
          }),
        );
      } catch {
        continue; // written since (a new expiry): not this deletion's item any more
      }
      this.ttlDeleted.set(String(item.pk), item);
      const late = (now - expiresAt * 1000) / 3_600_000;
      world.scheduler.trace(`dynamodb-ttl deleted ${String(item.pk)} (${late.toFixed(1)} h after its expiry)`);
    }
    world.scheduler.at(TTL_SWEEP_EVERY_MS, () => this.sweepTtl(maxDelaySeconds));
  }
}
