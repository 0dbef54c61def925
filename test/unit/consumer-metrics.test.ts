import type { Metrics } from '@aws-lambda-powertools/metrics';

/**
 * A consumer's metrics carry its name (the `consumer` dimension) beside the service's. In Lambda one
 * consumer runs per process; a test or the simulation loads several in one, and each must replace the
 * last one's dimension quietly, keeping `service`.
 */
const ENV = {
  POWERTOOLS_SERVICE_NAME: 'ExactlyOnce-test',
  EFFECTS_TABLE_NAME: 'effects',
  PROVIDER_LOG_TABLE_NAME: 'provider-log',
  INBOX_TTL_SECONDS: '1900800',
  DEDUPE_HORIZON_SECONDS: '1814400',
  QUEUE_URL: 'https://sqs.us-east-1.amazonaws.com/123456789012/q',
  DEAD_LETTER_QUEUE_URL: 'https://sqs.us-east-1.amazonaws.com/123456789012/dlq',
};

test('two consumers loaded in one process set their dimension without a warning; the service dimension stays', async () => {
  const saved = { ...process.env };
  Object.assign(process.env, ENV);
  const warn = jest.spyOn(console, 'warn').mockImplementation(() => undefined);
  let metrics: Metrics | undefined;
  try {
    await jest.isolateModulesAsync(async () => {
      await import('../exactly-once/fixtures/handlers/probe-consumer');
      await import('../exactly-once/fixtures/handlers/probe-fifo-consumer');
      ({ metrics } = await import('@exactly-once/runtime/runtime/observability'));
    });

    metrics!.addMetric('EffectApplied', 'Count', 1);
    const emf = metrics!.serializeMetrics() as unknown as Record<string, unknown> & {
      _aws: { CloudWatchMetrics: { Dimensions: string[][] }[] };
    };

    expect(warn.mock.calls.flat().join('\n')).not.toMatch(/has already been added/);
    expect(emf._aws.CloudWatchMetrics[0].Dimensions[0]).toEqual(['service', 'consumer']);
    expect({ service: emf.service, consumer: emf.consumer }).toEqual({
      service: 'ExactlyOnce-test',
      consumer: 'probe-fifo',
    });
  } finally {
    warn.mockRestore();
    process.env = saved;
  }
});
