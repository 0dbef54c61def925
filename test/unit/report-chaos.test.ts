import { emptyChaosCounters } from '@exactly-once/tools/local-runtime/provider/chaos';
import {
  chaosSummary,
  htmlReport,
  poisonInWords,
  terminalSummary,
  type RunResults,
} from '@exactly-once/tools/proof-kit/report';
import { emptyVerification, smokeRunResults } from '../support/run-results';

/**
 * The local provider's chaos as a run reports it: only the faults that fired, by requests hit, in the
 * terminal and the HTML report alike; nothing when none fired or it was not measured (AWS).
 */
const verification = emptyVerification();
const withChaos = (providerChaos: RunResults['providerChaos']): RunResults => ({
  ...smokeRunResults(verification),
  providerChaos,
});

test('the faults that fired, by requests hit; one that did not is left out', () => {
  const chaos = { ...emptyChaosCounters(), answersDropped: 4, burstUnavailable: 6, burstsStarted: 2 };

  const line = chaosSummary(chaos);

  expect(line).toBe('4 answers dropped after the effect, 6 503s in 2 bursts');
  expect(terminalSummary(withChaos(chaos))).toContain(`  provider chaos  ${line}`);
  expect(htmlReport(withChaos(chaos))).toContain(`<th>provider chaos</th><td>${line}</td>`);
});

test.each([
  ['none fired', emptyChaosCounters()],
  ['not measured', undefined],
])('%s: no provider chaos line', (_what, chaos) => {
  expect(chaosSummary(chaos)).toBe('');
  expect(terminalSummary(withChaos(chaos))).not.toContain('provider chaos');
  expect(htmlReport(withChaos(chaos))).not.toContain('provider chaos');
});

test.each([
  [6, 6, '6 poison message(s) sent, 6 DLQ entries for them: each once'],
  [
    6,
    8,
    '6 poison message(s) sent, 8 DLQ entries for them; the 2 more are copies of the same messages, dead-lettered again each time a batch they were in crashed and came back',
  ],
])("%i poison messages sent, %i DLQ entries: said in an operator's words", (sent, entries, words) => {
  const results: RunResults = {
    ...smokeRunResults(verification),
    injected: { ...smokeRunResults(verification).injected, poisonMessages: sent },
    verification: {
      ...verification,
      deadLetters: [{ queue: 'loyalty DLQ', cause: 'poison (SchemaViolation)', count: entries, expected: true }],
    },
  };

  expect(poisonInWords(results)).toBe(words);
  expect(terminalSummary(results)).toContain(`  poison          ${words}`);
  expect(htmlReport(results)).toContain(`<th>poison</th><td>${words}</td>`);
});
