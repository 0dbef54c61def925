/**
 * The local provider: a mail API and a warehouse API that fail like real
 * ones (Stripe-like idempotency keys, a keyless mode, seeded chaos) and log
 * every effect they perform. See ./README.md.
 */
export {
  startProviderEmulator,
  PROVIDER_ROUTES,
  DEFAULT_PROVIDER_API_KEY,
  DEFAULT_KEY_WINDOW_MS,
  DEFAULT_MAX_BODY_BYTES,
  type ProviderEmulator,
  type ProviderEmulatorOptions,
  type ProviderLog,
  type ProviderCounters,
  type PerformedEffect,
  type KeyRequestCounts,
} from './server';
export {
  parseChaosPlan,
  PROVIDER_ENDPOINTS,
  type ProviderChaosPlan,
  type ProviderEndpoint,
  type FaultRate,
  type ChaosCounters,
} from './chaos';
