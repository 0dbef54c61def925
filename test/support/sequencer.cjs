const Sequencer = require('@jest/test-sequencer').default;
const SLOWEST_FIRST = require('./slowest-files.cjs');

/**
 * Jest's order (files that failed last time first, then files it has no duration for, then the rest
 * longest first), except that among the files it has no duration for, those on the slowest-files list
 * come first, in the list's order, instead of the largest files: on a machine with no cache the longest
 * files start first and the workers end together.
 */
class SlowestFirstSequencer extends Sequencer {
  sort(tests) {
    const jestOrder = super.sort(tests);
    const listed = (test) => {
      const index = SLOWEST_FIRST.findIndex((file) => test.path.endsWith(`/${file}`));
      return index < 0 ? SLOWEST_FIRST.length : index;
    };
    const key = (test) => [this.hasFailed(test) ? 0 : 1, test.duration == null ? 0 : 1];
    return jestOrder
      .map((test, position) => ({ test, position }))
      .sort((a, b) => {
        const [failedA, timedA] = key(a.test);
        const [failedB, timedB] = key(b.test);
        if (failedA !== failedB || timedA !== timedB) return failedA - failedB || timedA - timedB;
        if (timedA === 0) return listed(a.test) - listed(b.test) || a.position - b.position;
        return a.position - b.position;
      })
      .map(({ test }) => test);
  }
}

module.exports = SlowestFirstSequencer;
