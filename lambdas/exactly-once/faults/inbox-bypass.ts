import type { FaultPlan } from './plan';

/**
 * The local runtime's test-only switch: consumers named in the plan's
 * `disableInboxClaim` skip their inbox claim, so a duplicate delivery becomes a
 * second effect and the proof kit's verification must fail. Only the local
 * runtime's build reaches this module (`INBOX_BYPASS_BUILD`, bundleDefines in lib/exactly-once/function-defaults.ts); no
 * deployable bundle contains it.
 */
export function parseInboxBypass(source: Record<string, unknown>): Pick<FaultPlan, 'disableInboxClaim'> {
  const disabled = source.disableInboxClaim;
  return Array.isArray(disabled)
    ? { disableInboxClaim: disabled.filter((d): d is string => typeof d === 'string') }
    : {};
}

/** Whether `consumer` skips its inbox claim under `plan`. */
export function inboxClaimDisabled(plan: FaultPlan, consumer: string): boolean {
  return plan.disableInboxClaim?.includes(consumer) === true;
}
