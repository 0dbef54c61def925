import { InjectedProviderOutage, providerDown, type FaultPlan } from './plan';
import type { ExternalProvider } from '../provider/provider';

/**
 * The proof kit's `provider-outage` fault in front of a provider: while the
 * current plan says the provider is down (its window, or the per-call roll),
 * the call fails before reaching it, as a 5xx or a timeout would. The consumer
 * treats it as transient, and the inbox keeps the call owed until it goes through.
 * With no plan (every deployment without fault injection) it only forwards.
 */
export class OutageProneProvider implements ExternalProvider {
  constructor(
    private readonly inner: ExternalProvider,
    private readonly name: string,
    private readonly plan: () => FaultPlan,
    private readonly now: () => Date = () => new Date(),
  ) {}

  async send(
    idempotencyKey: string,
    payload: Record<string, unknown>,
    options?: { signal?: AbortSignal },
  ): Promise<void> {
    if (providerDown(this.plan(), this.name, this.now())) throw new InjectedProviderOutage(this.name);
    await this.inner.send(idempotencyKey, payload, options);
  }
}
