import { Scheduler } from '@exactly-once/tools/simulation/world/scheduler';
import { SimQueue } from '@exactly-once/tools/simulation/world/sqs';

/** The simulated queues behave as SQS does where the pipeline depends on it. */
function queues(fifo: boolean) {
  const scheduler = new Scheduler(1);
  const dlq = new SimQueue(scheduler, {
    name: 'dlq',
    fifo,
    visibilityTimeoutSeconds: 30,
    retentionSeconds: 14 * 86400,
  });
  const queue = new SimQueue(scheduler, {
    name: 'source',
    fifo,
    visibilityTimeoutSeconds: 30,
    maxReceiveCount: 3,
    retentionSeconds: 4 * 86400,
    deadLetterQueue: dlq,
  });
  return { scheduler, queue, dlq };
}

test('FIFO: a group delivers in send order and stays locked while one of its messages is in flight', () => {
  const { queue } = queues(true);
  queue.send('a1', { groupId: 'a', dedupId: 'a1' });
  queue.send('a2', { groupId: 'a', dedupId: 'a2' });
  queue.send('b1', { groupId: 'b', dedupId: 'b1' });

  const first = queue.receive(1);
  const second = queue.receive(10);

  expect(first.map((m) => m.body)).toEqual(['a1']);
  expect(second.map((m) => m.body)).toEqual(['b1']);
});

test('FIFO: the same deduplication id within 5 minutes is dropped, after 5 minutes it is a new message', async () => {
  const { scheduler, queue } = queues(true);
  queue.send('x', { groupId: 'g', dedupId: 'same' });
  queue.send('x', { groupId: 'g', dedupId: 'same' });
  const within = queue.all().length;
  scheduler.at(5 * 60 * 1000, () => queue.send('x', { groupId: 'g', dedupId: 'same' }));
  await scheduler.run();

  expect(within).toBe(1);
  expect(queue.all()).toHaveLength(2);
});

test('a message received maxReceiveCount times moves to the DLQ on the next receive', async () => {
  const { scheduler, queue, dlq } = queues(false);
  queue.send('poison');
  const counts: number[] = [];
  for (let i = 0; i < 4; i++) {
    scheduler.at(31_000, () => counts.push(...queue.receive(10).map((m) => m.receiveCount)));
    await scheduler.run();
  }

  expect(counts).toEqual([1, 2, 3]);
  expect(dlq.all().map((m) => m.body)).toEqual(['poison']);
});

test('a delete with an older receipt handle leaves the message in the queue; the latest handle deletes it', async () => {
  const { scheduler, queue } = queues(false);
  queue.send('m');
  const [first] = queue.receive(1);
  scheduler.at(31_000, () => undefined);
  await scheduler.run();
  const [second] = queue.receive(1);

  expect(queue.delete(first.handle!)).toBe(false);
  expect(queue.delete(second.handle!)).toBe(true);
  expect(queue.all()).toHaveLength(0);
});

test('ChangeMessageVisibility makes a message visible again at the new time only', async () => {
  const { scheduler, queue } = queues(false);
  queue.send('m');
  const [message] = queue.receive(1);
  queue.changeVisibility(message.handle!, 5);
  const seen: number[] = [];
  scheduler.at(4_000, () => seen.push(queue.receive(1).length));
  scheduler.at(5_000, () => seen.push(queue.receive(1).length));
  await scheduler.run();

  expect(seen).toEqual([0, 1]);
});

test('a message older than the retention period is gone, and counted as expired', async () => {
  const { scheduler, queue } = queues(false);
  queue.send('old');
  scheduler.at(4 * 86400 * 1000 + 1, () => undefined);
  await scheduler.run();

  expect(queue.receive(10)).toHaveLength(0);
  expect(queue.expired.map((m) => m.body)).toEqual(['old']);
});

test("a DLQ's retention: a standard queue's move keeps the message's enqueue time, FIFO's restarts it", async () => {
  const DAY_MS = 86400 * 1000;
  const inDlqOn = async (fifo: boolean, days: number[]) => {
    const { scheduler, queue, dlq } = queues(fifo);
    if (fifo) queue.send('m', { groupId: 'g', dedupId: 'm' });
    else queue.send('m');
    // Received three times, never deleted; the fourth receive (day 1) moves it to the DLQ.
    for (const at of [0, 31_000, 62_000, DAY_MS]) scheduler.at(at, () => queue.receive(10));
    const seen: boolean[] = [];
    for (const day of days) scheduler.at(day * DAY_MS, () => seen.push(dlq.all().length === 1));
    await scheduler.run();
    return { seen, expired: dlq.expired.map((m) => m.body) };
  };

  // 14 days from its first send (day 0), not from its move (day 1).
  expect(await inDlqOn(false, [13.9, 14.1])).toEqual({ seen: [true, false], expired: ['m'] });
  expect(await inDlqOn(true, [14.1, 14.9, 15.1])).toEqual({ seen: [true, true, false], expired: ['m'] });
});

test('a redrive sends each DLQ message back as a new message: new id, no receives yet, retention from the redrive', async () => {
  const DAY_MS = 86400 * 1000;
  const { scheduler, queue, dlq } = queues(false);
  const original = dlq.send('m', { attributes: { failureCause: 'RetryBudgetExhausted' } });
  const redriven: { ids: string[]; receives: number[] }[] = [];
  scheduler.at(13 * DAY_MS, () => {
    expect(dlq.redriveTo(queue)).toBe(1);
    redriven.push({ ids: queue.all().map((m) => m.messageId), receives: queue.all().map((m) => m.receiveCount) });
  });
  // Past the DLQ's 14 days from the original send, inside the source queue's 4 from the redrive.
  scheduler.at(16 * DAY_MS, () => redriven.push({ ids: queue.all().map((m) => m.messageId), receives: [] }));
  await scheduler.run();

  expect(redriven[0].ids).toHaveLength(1);
  expect(redriven[0].ids[0]).not.toBe(original);
  expect(redriven[0].receives).toEqual([0]);
  expect(redriven[1].ids).toEqual(redriven[0].ids);
  expect(queue.expired).toEqual([]);
});
