/**
 * The environment variable names the stack sets and the handlers read: one
 * constant on both sides, so a rename cannot leave a function reading a name
 * nobody sets (it would fail at cold start, after a deploy).
 */
export const ENV = Object.freeze({
  ordersTable: 'ORDERS_TABLE_NAME',
  idempotencyTable: 'IDEMPOTENCY_TABLE_NAME',
  idempotencyKeyExpirySeconds: 'IDEMPOTENCY_KEY_EXPIRY_SECONDS',
  /** The API functions' caller rule: comma-separated role-name patterns whose sessions are people (lambdas/domain/caller.ts). */
  humanRolePatterns: 'HUMAN_ROLE_PATTERNS',
  effectsTable: 'EFFECTS_TABLE_NAME',
  providerLogTable: 'PROVIDER_LOG_TABLE_NAME',
  inboxTtlSeconds: 'INBOX_TTL_SECONDS',
  /** A consumer's dedupe horizon (lambdas/domain/dedupe-horizon.ts), set with the inbox TTL from one derivation. */
  dedupeHorizonSeconds: 'DEDUPE_HORIZON_SECONDS',
  /** A consumer's own queue and DLQ. */
  queueUrl: 'QUEUE_URL',
  deadLetterQueueUrl: 'DEAD_LETTER_QUEUE_URL',
  /** The relay's and the sweeper's routing: JSON, a list of ConsumerRoute (lambdas/messaging/routes.ts). */
  consumerRoutes: 'CONSUMER_ROUTES',
  outboxSweepAgeSeconds: 'OUTBOX_SWEEP_AGE_SECONDS',
});
