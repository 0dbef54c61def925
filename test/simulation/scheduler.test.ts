import { Scheduler } from '@exactly-once/tools/simulation/world/scheduler';

/** Awaits `depth` times in a row, as a handler's chain of awaited calls does, then records that it got through. */
async function chain(depth: number, done: string[], name: string): Promise<void> {
  for (let i = 0; i < depth; i++) await Promise.resolve();
  done.push(name);
}

test('every continuation an event unblocks runs before the next event, however long its chain of awaits', async () => {
  const scheduler = new Scheduler(1);
  const seen: string[] = [];
  scheduler.at(10, () => void chain(200, seen, 'continuation of the first event'));
  scheduler.at(10, () => seen.push('second event'));

  await scheduler.run();

  expect(seen).toEqual(['continuation of the first event', 'second event']);
});

test('a run gives the host back as it found it: stack traces and process.env, also when an event throws', async () => {
  const env = process.env;
  const limit = Error.stackTraceLimit;
  const during: { stack: string | undefined; sameEnv: boolean; path: string | undefined }[] = [];
  const scheduler = new Scheduler(1);
  scheduler.at(1, () =>
    during.push({ stack: new Error('x').stack, sameEnv: process.env === env, path: process.env.PATH }),
  );
  scheduler.at(2, () => {
    throw new Error('an event failed');
  });

  await expect(scheduler.run()).rejects.toThrow('an event failed');

  expect(during).toEqual([{ stack: 'Error: x', sameEnv: false, path: env.PATH }]);
  expect(process.env).toBe(env);
  expect(Error.stackTraceLimit).toBe(limit);
  expect(new Error('y').stack).toContain('scheduler.test');
});

test('overlapping runs restore the host once, when the last of them ends', async () => {
  const env = process.env;
  const limit = Error.stackTraceLimit;
  const first = new Scheduler(1);
  const second = new Scheduler(2);
  first.at(1, () => undefined);
  second.at(5, () => undefined);

  await Promise.all([first.run(), second.run()]);

  expect(process.env).toBe(env);
  expect(Error.stackTraceLimit).toBe(limit);
});
