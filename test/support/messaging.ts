import type { DynamoDBRecord } from 'aws-lambda';
import { CONSUMERS } from '../../lambdas/shop/consumers';
import type { ConsumerRoute } from '@exactly-once/runtime/outbox/routes';
import { matchesAnyFilter } from '@exactly-once/tools/local-runtime/sources/event-filter';
import { createTemplateQueues, relayStreamFilters } from './emulated-messaging';
import { defaultStackTemplate } from './synth';

export { receiveAll, receiveMatching, receiveSqsEvent, StreamReader, testSqsClient } from './emulated-messaging';

/** The shop's queues on fauxqs: its two consumers' queues and DLQs, and the relay's failure queue. */
export interface TestQueues {
  fifoQueueUrl: string;
  fifoDlqUrl: string;
  standardQueueUrl: string;
  standardDlqUrl: string;
  relayFailureQueueUrl: string;
}

/**
 * The shop stack's queues exactly as its template declares them, created by the local runtime's own
 * provisioning under fresh names so test files never share a queue.
 */
export async function createTestQueues(options: { visibilityTimeoutSeconds?: number } = {}): Promise<TestQueues> {
  const queues = await createTemplateQueues(defaultStackTemplate(), options);
  const url = (prefix: string) => {
    const match = [...queues].find(([logicalId]) => logicalId.startsWith(prefix));
    if (match === undefined) throw new Error(`The stack has no queue ${prefix}*`);
    return match[1];
  };
  return {
    fifoQueueUrl: url('PipelinesFulfilmentQueuesQueue'),
    fifoDlqUrl: url('PipelinesFulfilmentQueuesDlq'),
    standardQueueUrl: url('PipelinesLoyaltyQueuesQueue'),
    standardDlqUrl: url('PipelinesLoyaltyQueuesDlq'),
    relayFailureQueueUrl: url('OutboxRelayRelayFailures'),
  };
}

let relayFilters: unknown[] | undefined;

/** The shop stack's relay stream filter, as `relayStreamFilters` reads it from its synthesized template. */
export function shopRelayFilters(): unknown[] {
  relayFilters ??= relayStreamFilters(defaultStackTemplate());
  return relayFilters;
}

/**
 * Whether a stream record passes the shop stack's relay event source mapping filter: the
 * FilterCriteria of the synthesized template, evaluated by the local runtime's filter engine.
 */
export function passesRelayFilter(record: DynamoDBRecord): boolean {
  return matchesAnyFilter(shopRelayFilters(), record);
}

/**
 * The relay's routes to the test queues, from the consumer list, as the stack builds them for CONSUMER_ROUTES.
 * These tests create the example consumers' queues only; a consumer added to the list (npm run new:consumer)
 * has its own generated test, and the proof kit and the simulation run it with the rest.
 */
export function testRoutes(queues: TestQueues): ConsumerRoute[] {
  const queueUrlOf: Record<string, string | undefined> = {
    fulfilment: queues.fifoQueueUrl,
    loyalty: queues.standardQueueUrl,
  };
  return CONSUMERS.flatMap(({ name, fifo, eventTypes }) => {
    const queueUrl = queueUrlOf[name];
    return queueUrl === undefined ? [] : [{ consumer: name, queueUrl, fifo, eventTypes: [...eventTypes] }];
  });
}
