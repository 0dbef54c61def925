import type { Context } from 'aws-lambda';

/**
 * The Lambda context a handler gets: a deadline `remainingMs` from now on
 * `clock` (the simulation passes its virtual clock and a request id of its own,
 * so nothing draws on its seeded randomness).
 *
 * @example A handler invoked with 5 s left on a virtual clock
 * ```ts
 * import { lambdaContext } from '@exactly-once/runtime/testing';
 *
 * await handler(event, lambdaContext(5_000, { clock: () => scheduler.now, requestId: 'relay#1' }));
 * ```
 */
export function lambdaContext(
  remainingMs = 10_000,
  options: { clock?: () => number; requestId?: string } = {},
): Context {
  const clock = options.clock ?? Date.now;
  const deadline = clock() + remainingMs;
  return {
    callbackWaitsForEmptyEventLoop: false,
    functionName: 'test-function',
    functionVersion: '$LATEST',
    invokedFunctionArn: 'arn:aws:lambda:us-east-1:123456789012:function:test-function',
    memoryLimitInMB: '256',
    awsRequestId: options.requestId ?? `req-${Math.random().toString(16).slice(2)}`,
    logGroupName: '/aws/lambda/test-function',
    logStreamName: 'stream',
    getRemainingTimeInMillis: () => Math.max(0, deadline - clock()),
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
}
