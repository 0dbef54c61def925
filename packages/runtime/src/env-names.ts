/**
 * The environment variable names the mechanism's constructs set and its handlers read: one
 * constant on both sides, so a rename cannot leave a function reading a name nobody sets (it
 * would fail at cold start, after a deploy). An application's own names live with it.
 *
 * @example
 * ```ts
 * // The stack sets it, the handler reads it: one constant on both sides
 * fn.addEnvironment(ENV.effectsTable, table.tableName);
 * const effectsTable = requireEnv(ENV.effectsTable);
 * ```
 */
export const ENV = Object.freeze({
  /** The table that holds the outbox items (and streams them): read by the relay and the sweeper. */
  outboxTable: 'OUTBOX_TABLE_NAME',
  /**
   * The partition-key prefix of the entities whose partitions hold their outbox items
   * (`<prefix><entityId>`), so the relay and the sweeper can mark an item dispatched.
   */
  outboxEntityPartitionPrefix: 'OUTBOX_ENTITY_PARTITION_PREFIX',
  effectsTable: 'EFFECTS_TABLE_NAME',
  providerLogTable: 'PROVIDER_LOG_TABLE_NAME',
  inboxTtlSeconds: 'INBOX_TTL_SECONDS',
  /** A consumer's dedupe horizon (packages/runtime/src/consumer/dedupe-horizon.ts), set with the inbox TTL from one derivation. */
  dedupeHorizonSeconds: 'DEDUPE_HORIZON_SECONDS',
  /**
   * `sequenced` on a consumer whose claims live on its entity items and never expire (ConsumerSpec.ledger):
   * it has no dedupe horizon, and the DedupeHorizon rule asks it for none.
   */
  consumerLedger: 'CONSUMER_LEDGER',
  /** A consumer's own queue and DLQ. */
  queueUrl: 'QUEUE_URL',
  deadLetterQueueUrl: 'DEAD_LETTER_QUEUE_URL',
  /** The relay's and the sweeper's routing: JSON, a list of ConsumerRoute (packages/runtime/src/outbox/routes.ts). */
  consumerRoutes: 'CONSUMER_ROUTES',
  outboxSweepAgeSeconds: 'OUTBOX_SWEEP_AGE_SECONDS',
  /** The code a function runs: its bundle's asset hash (FunctionWithDefaults sets it). A DLQ copy carries it. */
  codeVersion: 'CODE_VERSION',
  /**
   * An API function's caller rule (api/caller.ts): comma-separated role-name patterns whose sessions are
   * people, set by the stack from the stage's `humanRolePatterns`, read by `callerRuleFromEnv`.
   */
  humanRolePatterns: 'HUMAN_ROLE_PATTERNS',
  /** How long the relay and the sweeper keep an outbox item once dispatched (seconds; its TTL). */
  outboxDispatchedRetentionSeconds: 'OUTBOX_DISPATCHED_RETENTION_SECONDS',
});

/**
 * A configured external provider's variables, named after it (`mail` -> `PROVIDER_MAIL_ENDPOINT`,
 * `PROVIDER_MAIL_API_KEY_PARAMETER`): its endpoint, and the name of the SSM SecureString parameter
 * that holds its API key, or (the local runtime only) `PROVIDER_MAIL_API_KEY_FILE`, a file holding
 * it. The key itself is never in the environment.
 *
 * @example
 * ```ts
 * const names = providerEnvNames('mail');
 * const endpoint = process.env[names.endpoint];
 * ```
 */
export function providerEnvNames(provider: string): { endpoint: string; apiKeyParameter: string; apiKeyFile: string } {
  const stem = `PROVIDER_${provider.toUpperCase().replace(/-/g, '_')}`;
  // The key file is the local runtime's: its provider emulator has no SSM to keep the key in.
  return {
    endpoint: `${stem}_ENDPOINT`,
    apiKeyParameter: `${stem}_API_KEY_PARAMETER`,
    apiKeyFile: `${stem}_API_KEY_FILE`,
  };
}
