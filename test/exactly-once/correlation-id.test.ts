import type { LogItem } from '@aws-lambda-powertools/logger';
import { logger } from '@exactly-once/runtime/runtime/observability';
import { inSpan, setSpanSink } from '@exactly-once/runtime/trace/spans';
import { parseTraceparent } from '@exactly-once/runtime/trace/trace-context';

/**
 * The logger's correlation id is the trace id of the span a line is logged in: two records handled
 * side by side in one invocation each log their own, and a line outside any span carries none.
 */

const ORDER_A = '4bf92f3577b34da6a3ce929d0e0e4736';
const ORDER_B = '5759e988bd862e3fe1be46a994272793';
const carried = (traceId: string) => parseTraceparent(`00-${traceId}-00f067aa0ba902b7-01`);

let printed: Record<string, unknown>[];
let restoreSink: () => void;
beforeEach(() => {
  printed = [];
  logger.setLogLevel('INFO');
  // The lines as the logger would print them (printLog is where a finished line goes).
  jest
    .spyOn(logger as unknown as { printLog: (level: number, log: LogItem) => void }, 'printLog')
    .mockImplementation((_level, log) => void printed.push(log.getAttributes()));
  restoreSink = setSpanSink(() => undefined);
});
afterEach(() => {
  restoreSink();
  jest.restoreAllMocks();
  logger.setLogLevel('SILENT');
});

const linesSaying = (message: string) => printed.filter((line) => line.message === message);

test('records handled side by side each log their own trace id as the correlation id; outside a span, none', async () => {
  // Each record logs, waits for the other to log, then logs again: the lines interleave.
  let releaseA!: () => void;
  let releaseB!: () => void;
  const aMayGoOn = new Promise<void>((resolve) => (releaseA = resolve));
  const bMayGoOn = new Promise<void>((resolve) => (releaseB = resolve));
  const record = (traceId: string, wait: Promise<void>, letOtherGoOn: () => void) =>
    inSpan('consumer', carried(traceId), async () => {
      logger.info('Consuming', { order: traceId });
      letOtherGoOn();
      await wait;
      logger.info('Consumed', { order: traceId });
    });

  await Promise.all([record(ORDER_A, aMayGoOn, releaseB), record(ORDER_B, bMayGoOn, releaseA)]);
  logger.info('Batch done');

  for (const message of ['Consuming', 'Consumed']) {
    const lines = linesSaying(message);
    expect(lines).toHaveLength(2);
    for (const line of lines) expect(line.correlation_id).toBe(line.order);
  }
  expect(printed.map((line) => line.message)).toEqual(['Consuming', 'Consuming', 'Consumed', 'Consumed', 'Batch done']);
  expect(linesSaying('Batch done')[0]).not.toHaveProperty('correlation_id');
});
