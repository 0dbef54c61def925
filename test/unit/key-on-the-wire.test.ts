import { HttpProvider } from '@exactly-once/runtime/aws';
import {
  startProviderEmulator,
  type ProviderChaosPlan,
  type ProviderEmulator,
} from '@exactly-once/tools/local-runtime/provider';
import { checkPerformedEffects } from '@exactly-once/tools/proof-kit/verify';
import { MAIL_AND_WAREHOUSE } from '../support/local-provider-apis';

/**
 * The idempotency key is the guard against the provider's own failures: the real HTTP provider
 * adapter against the local provider, under the two faults where the provider applied a call whose
 * answer the caller never got (the answer dropped, the answer later than the caller waits). The
 * caller retries under the same key, as a consumer's next try does. With the `Idempotency-Key`
 * header: one e-mail. With the header taken off the wire (the guard removed): two, and the proof
 * kit's provider check reports it.
 */
const KEY = 'loyalty:ord-1.placed';
const EMAIL = { template: 'order-confirmation', customerId: 'c-1', orderId: 'ord-1', pointsEarned: 12 };

let provider: ProviderEmulator | undefined;
let fetchSpy: jest.SpyInstance | undefined;
afterEach(async () => {
  fetchSpy?.mockRestore();
  fetchSpy = undefined;
  await provider?.stop();
  provider = undefined;
});

/** Takes the Idempotency-Key header off every request, as a caller that never sent it. */
function stripIdempotencyKey(): void {
  const realFetch = globalThis.fetch;
  fetchSpy = jest.spyOn(globalThis, 'fetch').mockImplementation((input, init) => {
    const headers = { ...(init?.headers as Record<string, string>) };
    delete headers['Idempotency-Key'];
    return realFetch(input, { ...init, headers });
  });
}

/** Calls until a 2xx, as a consumer's tries would (at most 10, waiting `pauseMs` between); returns the e-mails performed. */
async function sendUntilAnswered(chaos: ProviderChaosPlan, pauseMs = 0): Promise<number> {
  provider = await startProviderEmulator({ apiKey: 'k', apis: MAIL_AND_WAREHOUSE, chaos });
  const mail = new HttpProvider({ name: 'mail', endpoint: provider.endpoints.mail, apiKey: () => 'k', timeoutMs: 200 });
  for (let attempt = 0; attempt < 10; attempt++) {
    try {
      await mail.send(KEY, EMAIL);
      break;
    } catch {
      await new Promise((r) => setTimeout(r, pauseMs));
    }
  }
  return provider.log().performed.filter((e) => e.endpoint === 'mail').length;
}

/** The key's check alone: no domain's own rules on what was performed. */
const NO_DOMAIN_RULES = {};

describe.each([
  ['the answer dropped after the effect', { dropAnswer: { count: 1 } }, 0],
  ['the answer later than the caller waits', { slowAnswer: { count: 1, delayMs: 400 } }, 150],
] as const)('%s, then a retry', (_fault, chaos, pauseMs) => {
  test('with the key on the wire: one e-mail, and the retry got the stored answer', async () => {
    const performed = await sendUntilAnswered(chaos, pauseMs);

    expect(performed).toBe(1);
    expect(provider!.log().counters.replayed).toBe(1);
    expect(checkPerformedEffects(provider!.log().performed, new Set([KEY]), new Set(), [], NO_DOMAIN_RULES)).toEqual(
      [],
    );
  });

  test('without it (the guard removed): two e-mails, reported by the proof kit', async () => {
    stripIdempotencyKey();

    const performed = await sendUntilAnswered(chaos, pauseMs);

    expect(performed).toBe(2);
    expect(checkPerformedEffects(provider!.log().performed, new Set([KEY]), new Set(), [], NO_DOMAIN_RULES)).toEqual(
      expect.arrayContaining([
        { invariant: 'provider-effects', detail: 'mail: 2 effect(s) performed without an Idempotency-Key' },
      ]),
    );
  });
});
