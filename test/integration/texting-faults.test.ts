import { createTestTable } from '../support/table';
import { suiteSize } from '../support/suite-sizes';
import { markRaceMeters, type RaceCounts } from '../support/engine-meters';
import { runTextingFaults, type FaultRunFigures } from '../support/texting-fault-run';

/**
 * Texts under faults (docs/decisions.md, "Texts under faults"): 200 sends (520 in the
 * bench: TEXTING_FAULTS_SENDS) with retries against a
 * fake Twilio that answers late, resets, answers 5xx and 429 and calls back early, late, twice
 * and out of order, with DynamoDB throttling, transaction conflicts and lost answers injected.
 */
let figures: FaultRunFigures;
/** The engine's meters over the run. */
let races: RaceCounts;

beforeAll(async () => {
  await createTestTable();
  const meters = await markRaceMeters();
  // Act (once for the whole file: every assertion below reads the same run)
  figures = await runTextingFaults({ sends: suiteSize('TEXTING_FAULTS_SENDS', 200), seed: 14 });
  races = await meters.since();
}, 240_000);

describe('a mixed run of sends under carrier and DynamoDB faults', () => {
  it('injected every kind of fault it claims to survive', () => {
    // Assess: the run is only evidence if the faults happened
    for (const fault of [
      'ok',
      'late',
      'reset',
      'created_500',
      'not_created_503',
      'throttled_429',
      'invalid_number',
      'opted_out',
    ]) {
      expect(figures.carrierFaults[fault] ?? 0).toBeGreaterThan(0);
    }
    expect(figures.dynamoFaults.throttled).toBeGreaterThan(0);
    expect(figures.dynamoFaults.conflict).toBeGreaterThan(0);
    expect(figures.dynamoFaults.lostAnswer).toBeGreaterThan(0);
    // Besides the injected ones, the engine's own: the concurrent sends' transactions met on an item.
    expect(races.conflictsBy.TransactWriteItems).toBeGreaterThan(0);
    expect(figures.callbacks.duplicates).toBeGreaterThan(0);
    expect(figures.callbacks.reordered).toBeGreaterThan(0);
    expect(figures.callbacks.early).toBeGreaterThan(0);
    expect(figures.sendCalls).toBeGreaterThan(figures.sends); // clients retried
  });

  it('never texts a number whose opt-out is on record', () => {
    expect(figures.optedOutTexts).toBe(0);
    // The run checked the ledger for carrier opt-outs too (it throws when one is missing).
    expect(figures.carrierOptOutsLearned).toBeGreaterThan(0);
    expect(figures.outcomes['409 recipient_opted_out']).toBeGreaterThan(0);
  });

  it('makes at most one carrier request per Idempotency-Key', () => {
    expect(figures.duplicateTexts).toBe(0);
  });

  it("ends every message in a final status matching the carrier's", () => {
    expect(figures.statusMismatches).toBe(0);
    expect(figures.outcomes['gave up'] ?? 0).toBe(0);
  });

  it('balances the money ledger to the cent: spend equals the cost of the texts that did not fail', () => {
    expect(figures.ledgerDeltaCents).toBe(0);
  });
});
