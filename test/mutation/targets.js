// The files `npm run test:mutation` mutates, each with the test files its mutants run against. Stryker's jest
// runner cannot stop at the first failing test, and loads every listed file for every mutant, so a mutant of a
// pure module running the integration files' send loops took 40 s. Each file is run on its own (test/mutation/
// run.ts) with the tests that cover it: the score is that of these tests, a lower bound for the whole suite's.
const TARGETS = {
  'lambdas/contexts/texting/spend-plan.ts': ['test/unit/messages-billing.test.ts'],
  'lambdas/contexts/texting/spend-lease.ts': ['test/unit/spend-lease.test.ts', 'test/unit/spend.test.ts'],
  'lambdas/contexts/consent/ledger.ts': ['test/unit/messages-consent.test.ts', 'test/unit/consent.test.ts'],
  'lambdas/contexts/texting/settlement.ts': ['test/unit/settlement-sweep.test.ts'],
  'lambdas/contexts/texting/delivery-status.ts': [
    'test/unit/messages-store.test.ts',
    'test/unit/messages-loopback.test.ts',
    'test/unit/webhook-events.test.ts',
    'test/unit/messages-handlers.test.ts',
  ],
  'lambdas/contexts/texting/spend.ts': ['test/unit/spend.test.ts', 'test/unit/messages-billing.test.ts'],
  'lambdas/contexts/texting/sending.ts': [
    'test/unit/messages-handlers.test.ts',
    'test/unit/messages-billing.test.ts',
    'test/unit/messages-consent.test.ts',
    'test/unit/messages-send-time.test.ts',
  ],
};

module.exports = { TARGETS };
