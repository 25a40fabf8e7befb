// The order Jest starts the test files in. Jest's own order runs the slowest files first when it
// has timings from an earlier run, and the largest files first when it has none: a fresh clone (CI)
// has none, and a short file on the limits engine can take a minute (a race run, the texts under
// faults). Started last, it leaves one worker alone at the end while the other idles. So files
// start by kind, those that wait on engines and runtimes first, and the unit files (each a second
// or two) fill the workers' gaps at the end; within a kind, Jest's own order.
const Sequencer = require('@jest/test-sequencer').default;

/** Project display names, the slowest files first (by the per-file times of a full run on 2 cores). */
const KIND_ORDER = ['integration-limits', 'e2e', 'infra', 'integration', 'unit'];

/**
 * Files that start before every kind: the real `cdk synth` (esbuild for every function) is the longest single file
 * and mostly works in its own processes, so it runs beside the others from the start rather than as the tail.
 */
const FIRST = ['test/infra/synth.test.ts'];

const rankOf = (test) => {
  if (FIRST.some((file) => test.path.endsWith(file))) return -1;
  const name = test.context.config.displayName?.name;
  const rank = KIND_ORDER.indexOf(name);
  return rank === -1 ? KIND_ORDER.length : rank;
};

class ServicesFirstSequencer extends Sequencer {
  sort(tests) {
    // Array sort is stable: within a kind, Jest's order stays.
    return super.sort([...tests]).sort((a, b) => rankOf(a) - rankOf(b));
  }
}

module.exports = ServicesFirstSequencer;
