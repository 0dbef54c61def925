import {
  countDoubleEffects,
  countFaults,
  deliverAtLeastOnce,
  faultSchedule,
  FAULTS,
  type DeliveryTiming,
  type Fault,
  type FaultConsumer,
} from '@exactly-once/tools/bench/fault-schedule';

/**
 * The bench's double-effect counter, against two in-memory consumers on one
 * seeded schedule: a plain one (the effect, then ack) and one that claims the
 * message in the same step as its effect (an inbox). Which consumer applies
 * what follows from the order of its steps alone, not from timing: these
 * tests never assert a speed.
 */
const TIMING: DeliveryTiming = {
  invocationMs: 40,
  visibilityMs: 60,
  slowMs: 20,
  concurrentAfterMs: 5,
  maxDeliveries: 6,
};

interface Message {
  id: string;
  amount: number;
}

const messages: Message[] = Array.from({ length: 40 }, (_, i) => ({ id: `m${i}`, amount: 1 + (i % 5) }));

function plainConsumer(state: Map<string, number>): FaultConsumer<Message> {
  return async (m, hooks) => {
    state.set(m.id, (state.get(m.id) ?? 0) + m.amount);
    await hooks.afterEffect();
  };
}

function inboxConsumer(state: Map<string, number>, inbox: Set<string>, claim = true): FaultConsumer<Message> {
  return async (m, hooks) => {
    // Claim and effect in one synchronous step: as atomic as the transaction they stand for.
    if (claim) {
      if (inbox.has(m.id)) return;
      inbox.add(m.id);
    }
    state.set(m.id, (state.get(m.id) ?? 0) + m.amount);
    await hooks.afterEffect();
  };
}

const sent = messages.map((m) => ({ key: m.id, amount: m.amount }));

describe('bench fault schedule', () => {
  it('is the same for the same seed, and different for another', () => {
    expect(faultSchedule(7, 200, 0.2)).toEqual(faultSchedule(7, 200, 0.2));
    expect(faultSchedule(7, 200, 0.2)).not.toEqual(faultSchedule(8, 200, 0.2));
  });

  it('faults about the share asked for, every kind among them', () => {
    const counts = countFaults(faultSchedule(7, 1_000, 0.2));
    const total = Object.values(counts).reduce((s, n) => s + n, 0);

    expect(total).toBeGreaterThan(150);
    expect(total).toBeLessThan(250);
    for (const fault of FAULTS) expect(counts[fault]).toBeGreaterThan(0);
  });
});

describe('bench double-effect counter', () => {
  it('counts extra applications per key from the state against what was sent, and missing ones apart', () => {
    const applied = new Map([
      ['a', 6], // sent 3: applied twice
      ['b', 4], // sent 4: once
      ['c', 0], // sent 2: missing
    ]);

    expect(
      countDoubleEffects(
        [
          { key: 'a', amount: 3 },
          { key: 'b', amount: 4 },
          { key: 'c', amount: 2 },
        ],
        applied,
      ),
    ).toEqual({ double: 1, missing: 1 });
  });

  it.each(FAULTS)('a plain consumer applies a message twice under %s; an inbox consumer once', async (fault: Fault) => {
    const schedule = messages.map((_, i) => (i % 4 === 0 ? fault : undefined));
    const plain = new Map<string, number>();
    const ours = new Map<string, number>();

    await deliverAtLeastOnce(messages, schedule, plainConsumer(plain), { concurrency: 8, timing: TIMING });
    const report = await deliverAtLeastOnce(messages, schedule, inboxConsumer(ours, new Set()), {
      concurrency: 8,
      timing: TIMING,
    });

    expect(countDoubleEffects(sent, plain)).toEqual({ double: 10, missing: 0 });
    expect(countDoubleEffects(sent, ours)).toEqual({ double: 0, missing: 0 });
    expect(report.unacked).toBe(0);
  });

  it('on a seeded schedule with every fault: the inbox consumer 0, the same consumer with its claim removed one per fault', async () => {
    const schedule = faultSchedule(7, messages.length, 0.5);
    const faults = Object.values(countFaults(schedule)).reduce((s, n) => s + n, 0);
    const withClaim = new Map<string, number>();
    const withoutClaim = new Map<string, number>();

    await deliverAtLeastOnce(messages, schedule, inboxConsumer(withClaim, new Set()), {
      concurrency: 8,
      timing: TIMING,
    });
    await deliverAtLeastOnce(messages, schedule, inboxConsumer(withoutClaim, new Set(), false), {
      concurrency: 8,
      timing: TIMING,
    });

    expect(faults).toBeGreaterThan(0);
    expect(countDoubleEffects(sent, withClaim).double).toBe(0);
    expect(countDoubleEffects(sent, withoutClaim).double).toBe(faults);
  });

  it('redelivers a message whose handler died mid-way, without waiting for the dead handler', async () => {
    const state = new Map<string, number>();
    const schedule: (Fault | undefined)[] = messages.map(() => 'crash-before-completion');

    const report = await deliverAtLeastOnce(messages, schedule, inboxConsumer(state, new Set()), {
      concurrency: 8,
      timing: TIMING,
    });

    expect(report.crashes).toBe(messages.length);
    expect(report.deliveries).toBe(2 * messages.length);
    expect(report.unacked).toBe(0);
  });

  it('refuses a timing in which a crashed lock would outlive the visibility timeout', async () => {
    await expect(
      deliverAtLeastOnce(messages, [], plainConsumer(new Map()), {
        concurrency: 1,
        timing: { ...TIMING, visibilityMs: TIMING.invocationMs },
      }),
    ).rejects.toThrow('slowMs < invocationMs < visibilityMs');
  });
});
