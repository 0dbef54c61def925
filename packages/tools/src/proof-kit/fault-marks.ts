import type { FaultName } from './faults';
import type { RunResults } from './run-results';
import { EVENT_REPLACED } from './verify';
import { POISON_CAUSE } from '../dlq/causes';

/** What a run's results hold that shows a fault fired. */
type Observed = Pick<RunResults, 'evidence' | 'providerChaos' | 'injected' | 'verification'>;

/**
 * How many times each fault left its mark on a run, as the local host, the local provider, the kit's
 * own steps or the verdict saw it; `undefined` where this target cannot see it (the host's and the
 * provider's counters exist only on the local runtime). A fault enabled with a mark of 0 fired nowhere:
 * the run proves nothing about it, whatever its verdict (the forgotten keys, for one, when the pipeline
 * does not settle before the redrive).
 *
 * @example
 * ```ts
 * const marks = faultMarks(results);
 * const unseen = results.faults.filter((fault) => marks[fault] === 0); // enabled, never fired
 * ```
 */
export function faultMarks(r: Observed): Record<FaultName, number | undefined> {
  const host = (
    functions: 'Consumer' | 'Relay',
    counter: 'crashes' | keyof NonNullable<Observed['evidence']>[string],
  ) =>
    r.evidence === undefined
      ? undefined
      : Object.entries(r.evidence)
          .filter(([name]) => name.includes(functions))
          .reduce((n, [, counts]) => n + counts[counter], 0);
  const chaos = (counter: keyof NonNullable<Observed['providerChaos']>) => r.providerChaos?.[counter];
  const findings = (invariant: string) => r.verification.violations.filter((v) => v.invariant === invariant).length;
  return {
    crash: host('Consumer', 'crashes'),
    slow: host('Consumer', 'redeliveredWhileRunning'),
    transient: Object.values(r.verification.consumerMetrics).reduce((n, m) => n + (m.TransientFailure ?? 0), 0),
    poison: r.verification.deadLetters
      .filter((d) => d.cause === `poison (${POISON_CAUSE})`)
      .reduce((n, d) => n + d.count, 0),
    'relay-crash': host('Relay', 'crashes'),
    resend: host('Consumer', 'eventsResent'),
    'clock-skew': host('Consumer', 'eventsStampedAhead'),
    redrive: r.injected.redriven,
    'provider-outage': chaos('outageUnavailable'),
    'answer-lost': chaos('answersDropped'),
    'slow-answer': chaos('slowAnswers'),
    'rate-limited': chaos('rateLimited'),
    'server-errors': chaos('burstsStarted'),
    'keys-forgotten': chaos('keysForgottenEarly'),
    'reused-id': findings('event-id-reused'),
    'forged-first': findings(EVENT_REPLACED),
    'clock-skew-beyond': findings('occurred-in-future'),
  };
}

/**
 * The report's line on the faults of a run: each enabled fault with its marks, those that left none
 * named apart, and those this target cannot see. Empty for a run without faults.
 *
 * @example
 * ```ts
 * faultMarksInWords(results); // 'crash 2, slow 5; NO MARK: relay-crash (this run proves nothing about it: raise --fault-rate or run it alone)'
 * ```
 */
export function faultMarksInWords(r: Observed & Pick<RunResults, 'faults'>): string {
  if (r.faults.length === 0) return '';
  const marks: Readonly<Record<string, number | undefined>> = faultMarks(r);
  const seen = r.faults.filter((fault) => (marks[fault] ?? 0) > 0).map((fault) => `${fault} ${marks[fault]}`);
  const unmarked = r.faults.filter((fault) => marks[fault] === 0);
  const unseeable = r.faults.filter((fault) => marks[fault] === undefined);
  return [
    seen.join(', '),
    unmarked.length === 0
      ? ''
      : `NO MARK: ${unmarked.join(', ')} (this run proves nothing about ${unmarked.length === 1 ? 'it' : 'them'}: raise --fault-rate or run ${unmarked.length === 1 ? 'it' : 'them'} alone)`,
    unseeable.length === 0 ? '' : `not observable on this target: ${unseeable.join(', ')}`,
  ]
    .filter((part) => part !== '')
    .join('; ');
}
