// First: the modules below load Powertools, which reads its settings when it loads.
import './quiet-powertools';
import { example } from '../../example';
import { ENV } from '@exactly-once/runtime/env-names';
import { consumerRoutes } from './consumers';

/**
 * The handler modules build their deployed handler when they load, from this
 * environment (read once, as at a cold start). The simulation never invokes
 * those: it runs the same modules' handler factories on each simulated
 * invocation's parts. These placeholders only let the modules load; the
 * relay's routes name the simulated queues of the consumer list, as the
 * stack's do the deployed ones (a world given another list routes by that).
 */
const PLACEHOLDERS: Record<string, string> = {
  EFFECTS_TABLE_NAME: 'unused',
  PROVIDER_LOG_TABLE_NAME: 'unused',
  INBOX_TTL_SECONDS: '1',
  DEDUPE_HORIZON_SECONDS: '1',
  QUEUE_URL: 'unused',
  DEAD_LETTER_QUEUE_URL: 'unused',
  OUTBOX_TABLE_NAME: 'unused',
  OUTBOX_ENTITY_PARTITION_PREFIX: 'unused',
  OUTBOX_SWEEP_AGE_SECONDS: '1',
  OUTBOX_DISPATCHED_RETENTION_SECONDS: '1',
  [ENV.consumerRoutes]: JSON.stringify(consumerRoutes(example().consumers)),
  IDEMPOTENCY_TABLE_NAME: 'unused',
  IDEMPOTENCY_KEY_EXPIRY_SECONDS: '1',
};
for (const [name, value] of Object.entries(PLACEHOLDERS)) process.env[name] ??= value;

export {};
