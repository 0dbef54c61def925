import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import type { DynamoDBRecord } from 'aws-lambda';
import type { EventEnvelope } from '../envelope';
import { ENTITY_OUTBOX } from './outbox-table';

/** The event an outbox INSERT stream record carries, or why there is none. */
export function outboxEventOf(record: DynamoDBRecord): EventEnvelope | 'not-outbox' | 'malformed' {
  const image = record.dynamodb?.NewImage;
  if (record.eventName !== 'INSERT' || image === undefined) return 'not-outbox';
  const item = unmarshall(image as Record<string, AttributeValue>);
  if (item.entity !== ENTITY_OUTBOX) return 'not-outbox';
  const event = item.event as EventEnvelope | undefined;
  if (event === undefined || typeof event.eventId !== 'string' || typeof event.entityId !== 'string')
    return 'malformed';
  return event;
}
