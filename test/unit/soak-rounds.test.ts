import { roundsLostPerSite } from '../../bench/support/soak-rounds';

describe("the soak's rounds lost per site", () => {
  it("puts the runtime's lost rounds beside the engine's refusals, a path under its first site, busiest first", () => {
    // Prepare
    const lost = { 'spend.charge': 3, 'contacts.update': 1 };
    const refusals = {
      total: 4,
      bySite: {
        'spend.charge': {
          requests: 1,
          conditions: { 'TransactWriteItems ConditionalCheckFailed T#*#SPEND#* SPEND': 1 },
        },
        'spend.charge>texting.store': {
          requests: 2,
          conditions: { 'TransactWriteItems TransactionConflict T#*#THREAD#* THREAD': 2 },
        },
        '-': { requests: 1, conditions: { 'UpdateItem ConditionalCheckFailed T#* WEBHOOK#*': 1 } },
      },
    };
    // Act
    const rows = roundsLostPerSite(lost, refusals, 2_000);
    // Assess
    expect(rows).toEqual([
      {
        site: 'spend.charge',
        lost: 3,
        perThousand: 1.5,
        refused: 3,
        conditions: [
          'TransactWriteItems TransactionConflict T#*#THREAD#* THREAD (spend.charge>texting.store) x2',
          'TransactWriteItems ConditionalCheckFailed T#*#SPEND#* SPEND x1',
        ],
      },
      { site: 'contacts.update', lost: 1, perThousand: 0.5, refused: 0, conditions: [] },
      {
        site: '-',
        lost: 0,
        perThousand: 0,
        refused: 1,
        conditions: ['UpdateItem ConditionalCheckFailed T#* WEBHOOK#* x1'],
      },
    ]);
  });
});
