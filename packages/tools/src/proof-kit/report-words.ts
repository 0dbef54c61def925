import { faultMarksInWords } from './fault-marks';
import { judgeAppliedMetrics } from './metrics-check';
import { UNIT_PRICES } from './prices';
import type { Provenance } from './provenance';
import { verdictLine, verdictOf, type RunResults } from './report-results';
import type { Verification } from './verify';
import type { ChaosCounters } from '../local-runtime/provider';

/**
 * The run's results in words: the terminal summary and the sentences the HTML report's rows reuse
 * (statuses, poison, chaos, what was applied, the provenance).
 */

const fmt = (n: number | undefined, digits = 2) => (n === undefined ? 'not measured' : n.toFixed(digits));

export function terminalSummary(r: RunResults): string {
  const v = r.verification;
  const lines = [
    '',
    `Run ${r.runId} on ${r.target} (profile ${r.profile}, seed ${r.seed}, faults: ${r.faults.length ? r.faults.join(', ') : 'none'})`,
    ...(r.provenance === undefined
      ? []
      : [`  provenance      ${provenanceInWords(r.provenance)}`, `  reproduce       ${r.provenance.command}`]),
    `  requests        ${r.plan.requests} (${Object.entries(r.plan.byOperation)
      .map(([k, n]) => `${k} ${n}`)
      .join(', ')})`,
    `  throughput      ${r.http.throughputPerSecond.toFixed(1)} req/s over ${(r.http.durationMs / 1000).toFixed(1)} s`,
    `  latency         p50 ${r.http.latencyMs.p50} ms, p90 ${r.http.latencyMs.p90} ms, p99 ${r.http.latencyMs.p99} ms, max ${r.http.latencyMs.max} ms`,
    `  statuses        ${statusesInWords(r)}`,
    `  retries         ${r.http.replaysServed} replays served, ${r.http.conflicts409} answered 409 (in progress)`,
    `  applied         ${appliedSummary(v)}`,
    `  deliveries      ${
      Object.keys(v.consumerMetrics).length > 0
        ? `${METRICS_CAVEAT}: ${Object.entries(v.consumerMetrics)
            .map(
              ([c, m]) =>
                `${c}: ${m.EffectApplied ?? 0} of ${v.appliedEffects[c] ?? 0} applied, ${m.DuplicateSuppressed ?? 0} duplicates suppressed, ${m.OwedProviderCallCompleted ?? 0} owed provider calls completed, ${m.StaleEventIgnored ?? 0} stale ignored, ${m.PermanentFailure ?? 0} to DLQ, ${m.TransientFailure ?? 0} transient failures`,
            )
            .join('; ')}`
        : `duplicates suppressed (lower bound from provider repeats): ${
            Object.entries(v.duplicatesSuppressed)
              .map(([c, n]) => `${c} ${n}`)
              .join(', ') || 'none'
          }`
    }`,
    `  injected        ${r.injected.poisonMessages} poison messages; ${r.injected.redriven} messages redriven from DLQs${r.injected.providerKeysForgotten ? `; ${r.injected.providerKeysForgotten} provider keys of this run forgotten before the redrive` : ''}`,
    ...(chaosSummary(r.providerChaos) === '' ? [] : [`  provider chaos  ${chaosSummary(r.providerChaos)}`]),
    ...(faultMarksInWords(r) === '' ? [] : [`  fault marks     ${faultMarksInWords(r)}`]),
    `  DLQ by cause    ${v.deadLetters.map((d) => `${d.queue}: ${d.cause} x${d.count}${d.expected ? '' : ' (UNEXPECTED)'}`).join('; ') || 'empty'}`,
    ...(r.injected.poisonMessages > 0 ? [`  poison          ${poisonInWords(r)}`] : []),
    `  drained         ${r.drain.drained ? 'yes' : 'NO'} after ${(r.drain.waitedMs / 1000).toFixed(1)} s`,
    `  per ${v.entityNounSingular.padEnd(11)} API ${fmt(r.perEntity.apiRequests)}, Lambda ${fmt(r.perEntity.lambdaInvocations)}, DynamoDB writes ${fmt(r.perEntity.dynamodbWrites)}, reads ${fmt(r.perEntity.dynamodbReads)}, SQS ${fmt(r.perEntity.sqsRequests)}`,
    `  cost            ${r.costPerMillionEntities === undefined ? 'not computed (calls not measured on this target)' : `$${r.costPerMillionEntities.toFixed(2)} per million ${v.entityNoun} in requests (${UNIT_PRICES.asOf}; excludes Lambda duration and storage)`}`,
    `  effects         ${v.counts.entities} ${v.entityNoun} for ${v.counts.intents} intents (${v.effectsChecked}); ${v.counts.providerKeys} provider keys checked`,
    // Counted at the provider (the local provider's log): one line each, as they are.
    ...(v.providerLines ?? []),
    `  RESULT          ${r.passed ? 'PASS: 0 violations, effects == intents' : verdictLine(verdictOf(v.violations.length, r.drain))}`,
  ];
  for (const violation of v.violations.slice(0, 50)) lines.push(`    - [${violation.invariant}] ${violation.detail}`);
  if (v.violations.length > 50) lines.push(`    ... and ${v.violations.length - 50} more (see the JSON results)`);
  return lines.join('\n');
}

/**
 * The poison the kit sent against the DLQ entries it left, in an operator's words: a poison message that
 * crashed its batch comes back with the batch and is dead-lettered again, so entries may outnumber sends.
 */
export function poisonInWords(r: RunResults): string {
  const sent = r.injected.poisonMessages;
  const entries = r.verification.deadLetters
    .filter((d) => d.cause.startsWith('poison'))
    .reduce((n, d) => n + d.count, 0);
  const extra =
    entries > sent
      ? `; the ${entries - sent} more are copies of the same messages, dead-lettered again each time a batch they were in crashed and came back`
      : entries < sent
        ? `; ${sent - entries} not in a DLQ (yet)`
        : ': each once';
  return `${sent} poison message(s) sent, ${entries} DLQ entr${entries === 1 ? 'y' : 'ies'} for them${extra}`;
}

/**
 * `4 answers dropped after the effect, 2 answers sent late, ...`: the chaos faults that fired at the local
 * provider, by requests hit; '' when none did (or it was not measured).
 */
export function chaosSummary(c: ChaosCounters | undefined): string {
  if (c === undefined) return '';
  const parts: [number, string][] = [
    [c.answersDropped, 'answers dropped after the effect'],
    [c.slowAnswers, `answers sent late`],
    [c.rateLimited, '429s'],
    [c.burstUnavailable, `503s in ${c.burstsStarted} bursts`],
    [c.outageUnavailable + c.outageRefused, 'requests refused in the outage window'],
    [c.keysForgottenEarly, 'keys forgotten early'],
  ];
  return parts
    .filter(([n]) => n > 0)
    .map(([n, what]) => `${n} ${what}`)
    .join(', ');
}

/**
 * The consumers' metrics are flushed when an invocation ends, so an invocation that crashed (the
 * `crash` fault, an out-of-memory kill) took its counts with it: they undercount, never overcount
 * (an overcount of EffectApplied is a violation: metrics-check.ts). A commit whose provider call then
 * failed is still counted, in its own try.
 */
export const METRICS_CAVEAT = 'metrics flushed (a crashed invocation flushes none)';

/** `fulfilment 20, loyalty 20 (inbox claims stored)`: what was applied, from the tables. */
export function appliedSummary(v: Verification): string {
  const entries = Object.entries(v.appliedEffects);
  return entries.length === 0
    ? 'none'
    : `${entries.map(([c, n]) => `${c} ${n}`).join(', ')} (inbox claims stored for the judged ${v.entityNoun}' events)`;
}

/** `fulfilment 15 of 20 applied, loyalty 0 of 20 applied`: how much of it the metrics saw. */
export function metricsFlushed(v: Verification): string {
  const consumers = Object.keys(v.consumerMetrics);
  if (consumers.length === 0) return 'not measured on this target';
  const seen = judgeAppliedMetrics(v.consumerMetrics, v.appliedEffects)
    .map(
      (j) =>
        `${j.consumer} ${j.counted} of ${j.stored} applied` +
        (j.owedCallsCompleted > 0 ? ` (and ${j.owedCallsCompleted} owed provider calls completed)` : ''),
    )
    .join(', ');
  return `${seen}; a crashed invocation flushes none`;
}

const STATUS_WORDS: Record<string, string> = {
  '200': 'read',
  '201': 'created or replayed',
  '400': 'bad request',
  '403': 'refused',
  '404': 'not found',
  '409': 'in progress',
  '422': 'key reused with another body',
  '429': 'throttled',
  'no-response': 'no answer',
};

/** `201 x 23 (created or replayed; 3 replays), 409 x 2 (in progress)`: the load's HTTP statuses, with what each means. */
export function statusesInWords(r: Pick<RunResults, 'http'>): string {
  const entries = Object.entries(r.http.statuses).sort(([a], [b]) => a.localeCompare(b));
  if (entries.length === 0) return 'none';
  return entries
    .map(([status, n]) => {
      const words = STATUS_WORDS[status] ?? (status.startsWith('5') ? 'server error' : undefined);
      const replays = status === '201' && r.http.replaysServed > 0 ? `; ${r.http.replaysServed} replays` : '';
      return `${status} x ${n}${words === undefined ? '' : ` (${words}${replays})`}`;
    })
    .join(', ');
}

/** `abc1234 (uncommitted changes), local, us-east-1, Node v24.1.0`: the provenance in one line. */
export function provenanceInWords(p: Provenance): string {
  return `commit ${p.commit}, ${p.stack === 'local' ? 'local' : `stack ${p.stack}`}, ${p.region}, Node ${p.node}; ${p.load}; ${p.rates}`;
}
