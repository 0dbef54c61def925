import type { DeadLetterTally } from './dead-letter-verdicts';
import type { Violation } from './domain';
import type { ProviderFigures } from './provider-calls';

/** What the verification found (verify.ts `checkInvariants`), as the results and the report read it. */
export interface Verification {
  violations: Violation[];
  counts: {
    intents: number;
    /** The entities judged: this run's (or, verify-only, every one in the stack). */
    entities: number;
    providerKeys: number;
  };
  /** What the entities are called (`orders`) and what the domain's invariants checked (`8 cancelled; 40 SKUs, 30 customers`). */
  entityNoun: string;
  entityNounSingular: string;
  effectsChecked: string;
  duplicatesSuppressed: Record<string, number>;
  /**
   * Per consumer: the judged entities' events it applied, counted from what is stored (their inbox
   * claims, which commit with the effect). The metrics cannot give this: a crashed invocation dies
   * before it flushes them.
   */
  appliedEffects: Record<string, number>;
  /** Per consumer: EffectApplied, DuplicateSuppressed, StaleEventIgnored, PermanentFailure... where measured. */
  consumerMetrics: Record<string, Record<string, number>>;
  deadLetters: DeadLetterTally[];
  /**
   * Where the providers log what they performed (the local provider): one line per provider, what it
   * performed for this run's entities, counted at the provider. Absent for the recording double.
   */
  providerLines?: string[];
  /** Each provider's figures for the report's rows and chart, from the same log as `providerLines`. */
  providers?: ProviderFigures[];
}
