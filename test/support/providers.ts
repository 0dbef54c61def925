import { PermanentError } from '@exactly-once/runtime/errors';
import type { ExternalProvider } from '@exactly-once/runtime/provider/provider';
import { canonicalJson } from '@exactly-once/runtime/runtime/canonical-json';

/** The `providers` context of a dev stack whose two providers are configured (endpoints and API-key parameters). */
export const CONFIGURED_PROVIDERS = {
  dev: {
    warehouse: {
      endpoint: 'https://warehouse.example/v1/instructions',
      apiKeyParameter: '/exactly-once/dev/warehouse-api-key',
    },
    mail: { endpoint: 'https://mail.example/v1/messages', apiKeyParameter: '/exactly-once/dev/mail-api-key' },
  },
};

/**
 * An external provider as a Stripe-like one behaves, for tests on the ledgers: the first request under a
 * key is performed; a repeat with the same body is answered as the first was (not performed again); the
 * same key with another body is refused with 422, which HttpProvider turns into ProviderRejected.
 * `state.down`: every call fails (the call stays owed). `performed`: each performed request, in order;
 * `calls`: the key of every request it accepted, replays included.
 */
export function stripeLikeProvider() {
  const bodies = new Map<string, string>();
  const performed: { key: string; body: Record<string, unknown> }[] = [];
  const calls: string[] = [];
  const state = { down: false };
  const provider: ExternalProvider = {
    send: async (key, body) => {
      if (state.down) throw new Error('provider down');
      const first = bodies.get(key);
      if (first !== undefined && first !== canonicalJson(body))
        throw new PermanentError('ProviderRejected', `provider refused ${key} with 422: another payload`);
      if (first === undefined) performed.push({ key, body });
      bodies.set(key, canonicalJson(body));
      calls.push(key);
    },
  };
  return { provider, performed, calls, state };
}
