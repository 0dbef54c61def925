import type { Release } from '../releases';

/**
 * Guard `tenantInProviderKey` (inbox/keys.ts `providerKey`): the provider key carries the event's
 * tenant. Off: the key a consumer built before it, `<consumer>:<eventId>` (key shape 1), so two
 * tenants' events under one id meet at the provider under one key.
 */
export function providerKeyRelease(on: boolean, release: Release): Release {
  return on ? release : { ...release, providerKeyShape: 1 as const };
}
