import { emptyChaosCounters } from '@exactly-once/tools/local-runtime/provider/chaos';
import { faultMarks, faultMarksInWords } from '@exactly-once/tools/proof-kit/fault-marks';
import { ALL_FAULTS, ADVERSARIAL_FAULTS } from '@exactly-once/tools/proof-kit/faults';
import { htmlReport, terminalSummary, type RunResults } from '@exactly-once/tools/proof-kit/report';
import { EVENT_REPLACED } from '@exactly-once/tools/proof-kit/verify';
import { emptyVerification, smokeRunResults } from '../support/run-results';

/**
 * A run says which of its faults left a mark and which fired nowhere: a fault enabled but never fired
 * proves nothing, and the verdict alone (PASS) would not tell. Marks come from the local host's
 * counters, the local provider's, the kit's own steps and the verdict's findings.
 */
const HOST_QUIET = { crashes: 0, redeliveredWhileRunning: 0, eventsResent: 0, eventsStampedAhead: 0 };

function run(overrides: Partial<RunResults>): RunResults {
  return { ...smokeRunResults(emptyVerification()), ...overrides };
}

test('each fault is counted from what shows it fired: host, provider, kit and verdict', () => {
  const verification = emptyVerification();
  const results = run({
    faults: [...ALL_FAULTS, ...ADVERSARIAL_FAULTS],
    evidence: {
      'Probe Consumer': {
        crashes: 2,
        redeliveredWhileRunning: 3,
        eventsResent: 9,
        eventsStampedAhead: 4,
      },
      Relay: { ...HOST_QUIET, crashes: 1 },
    },
    providerChaos: {
      ...emptyChaosCounters(),
      outageUnavailable: 5,
      answersDropped: 6,
      slowAnswers: 7,
      rateLimited: 8,
      burstsStarted: 2,
      keysForgottenEarly: 20,
    },
    injected: { poisonMessages: 2, redriven: 3 },
    verification: {
      ...verification,
      consumerMetrics: { probe: { TransientFailure: 11 }, 'probe-fifo': { TransientFailure: 1 } },
      deadLetters: [{ queue: 'probe DLQ', cause: 'poison (SchemaViolation)', count: 2, expected: true }],
      violations: [
        { invariant: 'event-id-reused', detail: 'a' },
        { invariant: EVENT_REPLACED, detail: 'b' },
        { invariant: 'occurred-in-future', detail: 'c' },
        { invariant: 'occurred-in-future', detail: 'd' },
      ],
    },
  });

  const marks = faultMarks(results);

  expect(marks).toEqual({
    crash: 2,
    slow: 3,
    transient: 12,
    poison: 2,
    'relay-crash': 1,
    resend: 9,
    'clock-skew': 4,
    redrive: 3,
    'provider-outage': 5,
    'answer-lost': 6,
    'slow-answer': 7,
    'rate-limited': 8,
    'server-errors': 2,
    'keys-forgotten': 20,
    'reused-id': 1,
    'forged-first': 1,
    'clock-skew-beyond': 2,
  });
});

test('an enabled fault that fired nowhere is named apart, in the terminal and the HTML report', () => {
  const results = run({
    faults: ['crash', 'relay-crash', 'slow'],
    evidence: { 'Probe Consumer': { ...HOST_QUIET, redeliveredWhileRunning: 2 }, Relay: HOST_QUIET },
  });

  const words = faultMarksInWords(results);

  expect(words).toBe(
    'slow 2; NO MARK: crash, relay-crash (this run proves nothing about them: raise --fault-rate or run them alone)',
  );
  expect(terminalSummary(results)).toContain(`  fault marks     ${words}`);
  expect(htmlReport(results)).toContain(`<th>fault marks</th><td>${words}</td>`);
});

test('on a target without the local counters, the faults only they show are said to be unobservable, not unfired', () => {
  const results = run({ faults: ['crash', 'answer-lost', 'redrive'], injected: { poisonMessages: 0, redriven: 2 } });

  expect(faultMarksInWords(results)).toBe('redrive 2; not observable on this target: crash, answer-lost');
});

test('a run without faults has no fault line', () => {
  const results = run({ faults: [] });

  expect(faultMarksInWords(results)).toBe('');
  expect(terminalSummary(results)).not.toContain('fault marks');
  expect(htmlReport(results)).not.toContain('fault marks');
});
