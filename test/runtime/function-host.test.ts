import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { FunctionHost, type HostedFunction } from '@exactly-once/tools/local-runtime/host/function-host';
import { capturingLogger, eventually, isAlive } from './fixtures';

/**
 * The function host runs each function in child processes like Lambda
 * execution environments: warm reuse, timeouts that kill, crashes that fail
 * only their own invocation, concurrency limits, prefixed logs.
 */
const HANDLER = `
exports.handler = async (event, context) => {
  console.log('handling ' + JSON.stringify(event));
  if (event.sleepMs) await new Promise((r) => setTimeout(r, event.sleepMs));
  if (event.crash) process.exit(7);
  if (event.throw) throw new RangeError('bad input');
  return { pid: process.pid, remaining: context.getRemainingTimeInMillis(), requestId: context.awsRequestId, env: process.env.GREETING, region: process.env.AWS_REGION };
};
`;

let codeDir: string;
const hosts: FunctionHost[] = [];

function host(overrides: Partial<HostedFunction> = {}, maxConcurrency = 4, initTimeoutMs?: number) {
  const logger = capturingLogger();
  const h = new FunctionHost(
    {
      functionName: 'Fixture-Fn',
      displayName: 'Orders/Fn',
      arn: 'arn:aws:lambda:us-east-1:000000000000:function:Fixture-Fn',
      codeDir,
      handler: 'index.handler',
      runtime: 'nodejs24.x',
      timeoutSeconds: 2,
      memoryMb: 128,
      environment: { GREETING: 'hello' },
      ...overrides,
    },
    {
      region: 'eu-west-1',
      endpoints: { DYNAMODB: 'http://127.0.0.1:1' },
      log: logger.log,
      maxConcurrency,
      initTimeoutMs,
    },
  );
  hosts.push(h);
  return { host: h, lines: logger.lines };
}

beforeAll(() => {
  codeDir = fs.mkdtempSync(path.join(os.tmpdir(), 'host-test-'));
  fs.writeFileSync(path.join(codeDir, 'index.js'), HANDLER);
});

afterEach(async () => {
  await Promise.all(hosts.splice(0).map((h) => h.stop()));
});

test('reuses a warm environment and passes the template environment and context', async () => {
  const { host: fn } = host();

  const first = await fn.invoke({ n: 1 });
  const second = await fn.invoke({ n: 2 });

  expect(first.ok && second.ok).toBe(true);
  const [a, b] = [first, second].map((r) => (r.ok ? (r.payload as Record<string, unknown>) : {}));
  expect(b.pid).toBe(a.pid);
  expect(a).toMatchObject({ env: 'hello', region: 'eu-west-1', requestId: first.requestId });
  expect(a.remaining).toBeGreaterThan(1_000);
  expect(a.remaining).toBeLessThanOrEqual(2_000);
  expect(fn.stats.coldStarts).toBe(1);
});

test('an invocation past its timeout is killed and fails as on Lambda', async () => {
  const { host: fn } = host({ timeoutSeconds: 1 });
  await fn.invoke({ warm: true });
  const [pid] = fn.pids();

  const started = Date.now();
  const result = await fn.invoke({ sleepMs: 30_000 });

  // Killed at its 1 s timeout, long before the 30 s sleep would end (a generous bound, not a speed check).
  expect(Date.now() - started).toBeLessThan(20_000);
  expect(result).toMatchObject({ ok: false, reason: 'timeout', error: { errorType: 'Sandbox.Timedout' } });
  expect(!result.ok && result.error.errorMessage).toContain('Task timed out after 1.00 seconds');
  await eventually(() => (isAlive(pid) ? undefined : true), 10_000, 'the timed-out environment to exit');
  const next = await fn.invoke({ n: 3 });
  expect(next.ok).toBe(true); // A fresh environment (cold start) serves the next one.
});

test('a crash fails only the invocation it was running', async () => {
  const { host: fn } = host();

  const [crashed, fine] = await Promise.all([fn.invoke({ crash: true, sleepMs: 100 }), fn.invoke({ sleepMs: 300 })]);

  expect(crashed).toMatchObject({ ok: false, reason: 'crash', error: { errorType: 'Runtime.ExitError' } });
  expect(!crashed.ok && crashed.error.errorMessage).toContain('exit status 7');
  expect(fine.ok).toBe(true);
});

test('an invocation cut by the runtime stopping is no crash: no Invoke Error line, no crash counted', async () => {
  const { host: h, lines } = host();
  const running = h.invoke({ sleepMs: 5_000 });
  await eventually(() => lines.find((l) => l.includes('handling')), 15_000, 'the invocation to start');

  await h.stop();
  const result = await running;

  expect(result.ok).toBe(false);
  expect(h.stats.crashes).toBe(0);
  expect(lines.filter((l) => l.includes('Invoke Error') || l.includes('SIGKILL'))).toEqual([]);
});

test('an environment killed in its init by the runtime stopping reports nothing either', async () => {
  const { host: h, lines } = host();
  const starting = h.invoke({});

  await h.stop();
  const result = await starting;

  expect(result.ok).toBe(false);
  expect(lines.filter((l) => l.includes('INIT_REPORT') || l.includes('SIGKILL'))).toEqual([]);
});

describe('an init that outruns the init timeout is retried at the invocation, within the function timeout, as Lambda does', () => {
  /** A function whose module code takes `initMs` (a synchronous wait, as a heavy import is). */
  const slowInit = (initMs: number) => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'host-slow-init-'));
    fs.writeFileSync(
      path.join(dir, 'index.js'),
      `Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ${initMs});\n${HANDLER}`,
    );
    return dir;
  };

  test('an init longer than the init timeout but inside the function timeout: the invocation succeeds, late', async () => {
    const { host: h, lines } = host({ codeDir: slowInit(600), timeoutSeconds: 5 }, 4, 300);

    const result = await h.invoke({ n: 1 });

    expect(result.ok).toBe(true);
    expect(lines.filter((l) => l.includes('INIT_REPORT'))).toEqual([
      expect.stringContaining("INIT_REPORT Status: timeout; init retried within the function's 5 s timeout"),
    ]);
    expect(h.stats).toMatchObject({ errors: 0, coldStarts: 2 });
  });

  test('an init longer than the function timeout too: the invocation fails with the init timeout', async () => {
    const { host: h } = host({ codeDir: slowInit(3_000), timeoutSeconds: 1 }, 4, 300);

    const result = await h.invoke({ n: 1 });

    expect(result).toMatchObject({ ok: false, reason: 'init', error: { errorType: 'Runtime.InitTimeout' } });
  });
});

test('a thrown error is returned with its type and message, and the environment stays warm', async () => {
  const { host: fn } = host();
  const warm = await fn.invoke({});

  const failed = await fn.invoke({ throw: true });
  const after = await fn.invoke({});

  expect(failed).toMatchObject({
    ok: false,
    reason: 'error',
    error: { errorType: 'RangeError', errorMessage: 'bad input' },
  });
  expect(after.ok && warm.ok && (after.payload as { pid: number }).pid).toBe(
    warm.ok && (warm.payload as { pid: number }).pid,
  );
});

test('reserved concurrency bounds parallel environments; synchronous callers over it are throttled', async () => {
  const { host: fn } = host({ reservedConcurrency: 2 });

  const waiting = await Promise.all([1, 2, 3, 4].map(() => fn.invoke({ sleepMs: 300 }, 'wait')));
  const busy = [fn.invoke({ sleepMs: 300 }), fn.invoke({ sleepMs: 300 })];
  const throttled = await fn.invoke({}, 'throttle');
  await Promise.all(busy);

  expect(waiting.every((r) => r.ok)).toBe(true);
  expect(new Set(waiting.map((r) => r.ok && (r.payload as { pid: number }).pid)).size).toBe(2);
  expect(throttled).toMatchObject({ ok: false, reason: 'throttle', error: { errorType: 'TooManyRequestsException' } });
});

test('logs are prefixed with the function name and stop() leaves no process behind', async () => {
  const { host: fn, lines } = host();
  await Promise.all([fn.invoke({ sleepMs: 100, tag: 'x' }), fn.invoke({ sleepMs: 100, tag: 'y' })]);
  const pids = fn.pids();

  await fn.stop();

  expect(lines).toEqual(expect.arrayContaining(['[Orders/Fn] handling {"sleepMs":100,"tag":"x"}']));
  expect(pids).toHaveLength(2);
  expect(pids.filter(isAlive)).toEqual([]);
});
