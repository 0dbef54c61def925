import { pick, seededRandom } from '../proof-kit/random';

/**
 * At-least-once delivery with faults, in-process and domain-free: a seeded
 * schedule says which messages meet which fault, and a delivery loop plays it
 * against any consumer, the way a queue and a Lambda would:
 *
 * - `crash-before-ack`: the handler finished (effect and any completion
 *   record written), the process dies before the message is deleted; the
 *   message comes back after the visibility timeout;
 * - `crash-before-completion`: the process dies right after the effect, before
 *   anything the handler writes after it (Powertools' completion record, this
 *   design's provider call and done-mark). A dead process cleans nothing up, so
 *   the handler's promise is abandoned, never rejected: a lock it holds stays
 *   in progress until its own expiry, and the message comes back after the
 *   visibility timeout, which is longer than that expiry (as on AWS, where the
 *   lock lasts the invocation and visibility is 6x the function timeout);
 * - `duplicate`: the queue delivers the message again after it was acked;
 * - `slow`: the handler stalls after the effect, still inside its invocation,
 *   and a second copy is delivered while it runs (a standard queue's
 *   concurrent duplicate, or a visibility timeout shorter than the handler).
 *
 * A delivery that throws is not acked and comes back after the visibility
 * timeout, until `maxDeliveries`.
 */
export const FAULTS = ['crash-before-ack', 'crash-before-completion', 'duplicate', 'slow'] as const;
export type Fault = (typeof FAULTS)[number];

/** One fault (or none) per message, from the seed alone: the same seed plays the same faults for every consumer. */
export function faultSchedule(seed: number, messages: number, faultShare: number): (Fault | undefined)[] {
  const random = seededRandom(seed);
  return Array.from({ length: messages }, () => {
    const roll = random();
    const kind = pick(random, FAULTS);
    return roll < faultShare ? kind : undefined;
  });
}

export function countFaults(schedule: readonly (Fault | undefined)[]): Record<Fault, number> {
  const counts = Object.fromEntries(FAULTS.map((f) => [f, 0])) as Record<Fault, number>;
  for (const f of schedule) if (f !== undefined) counts[f]++;
  return counts;
}

/** What a consumer calls between its effect and whatever it writes after it. */
export interface DeliveryHooks {
  afterEffect(): Promise<void>;
}

export interface Delivery {
  /** Unique per delivery (a lease holder, a request id). */
  id: string;
  /** 1 for the first delivery of the message. */
  attempt: number;
  /** Epoch ms at which this delivery's invocation ends (its Lambda timeout). */
  invocationEndsAt: number;
}

export type FaultConsumer<M> = (message: M, hooks: DeliveryHooks, delivery: Delivery) => Promise<void>;

export interface DeliveryTiming {
  /** The invocation's time (the Lambda timeout): a lock or lease taken by a delivery lasts this long. */
  invocationMs: number;
  /** The visibility timeout: a delivery not acked comes back this long after it ended; must exceed invocationMs. */
  visibilityMs: number;
  /** How long a `slow` handler stalls after its effect (less than invocationMs: it is still alive). */
  slowMs: number;
  /** When the concurrent copy of a `slow` message is delivered, after the first one started. */
  concurrentAfterMs: number;
  maxDeliveries: number;
}

export const DEFAULT_TIMING: DeliveryTiming = {
  invocationMs: 1_000,
  visibilityMs: 1_500,
  slowMs: 600,
  concurrentAfterMs: 200,
  maxDeliveries: 6,
};

export interface DeliveryReport {
  deliveries: number;
  crashes: number;
  /** Deliveries that threw (not acked, delivered again). */
  failures: number;
  /** Messages never acked within maxDeliveries. */
  unacked: number;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
const NEVER = new Promise<never>(() => undefined);

export async function deliverAtLeastOnce<M>(
  messages: readonly M[],
  schedule: readonly (Fault | undefined)[],
  consume: FaultConsumer<M>,
  options: { concurrency: number; timing?: DeliveryTiming; idOf?: (message: M) => string },
): Promise<DeliveryReport> {
  const timing = options.timing ?? DEFAULT_TIMING;
  if (timing.visibilityMs <= timing.invocationMs || timing.slowMs >= timing.invocationMs)
    throw new Error('fault schedule: need slowMs < invocationMs < visibilityMs');
  const report: DeliveryReport = { deliveries: 0, crashes: 0, failures: 0, unacked: 0 };
  let sequence = 0;

  /** One delivery: 'acked', or why not. `crash` is where this delivery's process dies, if it does. */
  const deliverOnce = async (
    message: M,
    attempt: number,
    crash?: 'after-effect' | 'before-ack',
    stallMs = 0,
  ): Promise<'acked' | 'crashed' | 'failed'> => {
    report.deliveries++;
    const started = Date.now();
    let died!: () => void;
    const death = new Promise<'crashed'>((resolve) => (died = () => resolve('crashed')));
    const hooks: DeliveryHooks = {
      afterEffect: async () => {
        if (crash === 'after-effect') {
          died();
          return NEVER;
        }
        if (stallMs > 0) await sleep(stallMs);
      },
    };
    const delivery = { id: `d${++sequence}`, attempt, invocationEndsAt: started + timing.invocationMs };
    const outcome = await Promise.race([
      consume(message, hooks, delivery).then(
        (): 'acked' | 'crashed' => (crash === 'before-ack' ? 'crashed' : 'acked'),
        () => 'failed' as const,
      ),
      death,
    ]);
    if (outcome === 'crashed') report.crashes++;
    if (outcome === 'failed') report.failures++;
    return outcome;
  };

  /** Delivers until acked: the first try as given, later ones clean, each after the visibility timeout. */
  const untilAcked = async (message: M, first: () => Promise<'acked' | 'crashed' | 'failed'>, attempt = 1) => {
    let outcome = await first();
    while (outcome !== 'acked' && attempt < timing.maxDeliveries) {
      await sleep(timing.visibilityMs);
      outcome = await deliverOnce(message, ++attempt);
    }
    if (outcome !== 'acked') report.unacked++;
  };

  let next = 0;
  const worker = async () => {
    while (next < messages.length) {
      const i = next++;
      const message = messages[i];
      switch (schedule[i]) {
        case 'crash-before-ack':
          await untilAcked(message, () => deliverOnce(message, 1, 'before-ack'));
          break;
        case 'crash-before-completion':
          await untilAcked(message, () => deliverOnce(message, 1, 'after-effect'));
          break;
        case 'duplicate':
          await untilAcked(message, () => deliverOnce(message, 1));
          await untilAcked(message, () => deliverOnce(message, 2), 2);
          break;
        case 'slow':
          await Promise.all([
            untilAcked(message, () => deliverOnce(message, 1, undefined, timing.slowMs)),
            sleep(timing.concurrentAfterMs).then(() => untilAcked(message, () => deliverOnce(message, 2), 2)),
          ]);
          break;
        default:
          await untilAcked(message, () => deliverOnce(message, 1));
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(options.concurrency, messages.length)) }, worker));
  return report;
}

/**
 * Effects applied more (or fewer) times than sent, read from the effect's state:
 * `sent` is what each message adds to its key, `applied` what the state holds.
 * Each message should have a key of its own, so that `applied / amount` is the
 * number of times it was applied.
 */
export function countDoubleEffects(
  sent: readonly { key: string; amount: number }[],
  applied: ReadonlyMap<string, number>,
): { double: number; missing: number } {
  const expected = new Map<string, { total: number; amount: number }>();
  for (const { key, amount } of sent) {
    const entry = expected.get(key) ?? { total: 0, amount };
    entry.total += amount;
    expected.set(key, entry);
  }
  let double = 0;
  let missing = 0;
  for (const [key, { total, amount }] of expected) {
    const extra = Math.round(((applied.get(key) ?? 0) - total) / amount);
    if (extra > 0) double += extra;
    else missing -= extra;
  }
  return { double, missing };
}
