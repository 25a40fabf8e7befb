import { TZDate } from '@date-fns/tz';
import {
  nextAllowedInstant,
  QUIET_HOURS_OFF,
  quietHoursApply,
  type QuietHoursPolicy,
} from '../../lambdas/contexts/texting/quiet-hours';
import { recipientPlace } from '../../lambdas/contexts/texting/recipient-place';
import { QuietHoursError } from '../../lambdas/contexts/texting/errors';
import { toErrorResponse } from '../../lambdas/handlers/http/error-mapper';

const REFUSE: QuietHoursPolicy = { mode: 'refuse', appliesTo: 'all', window: { start: '08:00', end: '21:00' } };

/** An instant given as a wall-clock time in a zone (month 1-12). */
const local = (zone: string, y: number, m: number, d: number, h: number, min = 0): Date =>
  new Date(new TZDate(y, m - 1, d, h, min, 0, zone).getTime());

const NY = 'America/New_York';
const CHI = 'America/Chicago';
const LA = 'America/Los_Angeles';
const DEN = 'America/Denver';

// Wednesday 4 March 2026 (before daylight saving starts on Sunday 8 March).
const WED = [2026, 3, 4] as const;

describe('where a number rings', () => {
  it.each([
    ['+13055550100', [NY], 'FL'],
    ['+12125550100', [NY], 'NY'],
    ['+12145550100', [CHI], 'TX'],
    ['+14055550100', [CHI], 'OK'],
    ['+13015550100', [NY], 'MD'],
    ['+12065550100', [LA], 'WA'],
    ['+12035550100', [NY], 'CT'],
    ['+12085550100', ['America/Boise', LA], 'ID'],
    ['+14165550100', ['America/Toronto'], null],
    ['+18005550100', expect.arrayContaining([NY, 'Pacific/Guam']), null],
  ])('%s: zones %j, state %s', async (number, zones, state) => {
    // Act
    const place = await recipientPlace(number);

    // Assess
    expect(place).toEqual({ zones, state, northAmerican: true });
  });
});

describe('the window of each state', () => {
  it.each([
    // [number, zone, hour, minute, allowed, next opening (hour, day offset)]
    ['Florida', '+13055550100', NY, 20, 30, false],
    ['Florida', '+13055550100', NY, 19, 59, true],
    ['Oklahoma', '+14055550100', CHI, 20, 0, false],
    ['Oklahoma', '+14055550100', CHI, 19, 30, true],
    ['Maryland', '+13015550100', NY, 20, 15, false],
    ['Maryland', '+13015550100', NY, 8, 0, true],
    ['Washington', '+12065550100', LA, 20, 30, false],
    ['Washington', '+12065550100', LA, 19, 45, true],
    ['Connecticut', '+12035550100', NY, 8, 30, false],
    ['Connecticut', '+12035550100', NY, 20, 0, false],
    ['Connecticut', '+12035550100', NY, 9, 0, true],
    ['New York (federal window)', '+12125550100', NY, 20, 30, true],
    ['New York (federal window)', '+12125550100', NY, 21, 0, false],
    ['California (federal window)', '+12095550100', LA, 7, 59, false],
    ['Texas on a weekday', '+12145550100', CHI, 8, 30, false],
    ['Texas on a weekday', '+12145550100', CHI, 20, 59, true],
  ])('%s at %s, %s:%s local: allowed %s', async (_state, number, zone, hour, minute, allowed) => {
    // Prepare
    const at = local(zone, ...WED, hour, minute);

    // Act
    const next = await nextAllowedInstant(number, at, REFUSE);

    // Assess
    if (allowed) expect(next).toBeNull();
    else expect(next).not.toBeNull();
  });

  it('Florida at 20:30 is refused until 8:00 the next morning, local', async () => {
    // Act
    const next = await nextAllowedInstant('+13055550100', local(NY, ...WED, 20, 30), REFUSE);

    // Assess
    expect(next).toEqual(local(NY, 2026, 3, 5, 8));
  });

  it('Connecticut at 8:30 opens at 9:00 the same day; Washington at 20:30 at 8:00 the next', async () => {
    // Act
    const connecticut = await nextAllowedInstant('+12035550100', local(NY, ...WED, 8, 30), REFUSE);
    const washington = await nextAllowedInstant('+12065550100', local(LA, ...WED, 20, 30), REFUSE);

    // Assess
    expect(connecticut).toEqual(local(NY, ...WED, 9));
    expect(washington).toEqual(local(LA, 2026, 3, 5, 8));
  });
});

describe("Texas' Sunday", () => {
  // Sunday 1 March and Monday 2 March 2026.
  it('Sunday at 10:00 is refused until noon; Monday at 10:00 is allowed', async () => {
    // Act
    const sunday = await nextAllowedInstant('+12145550100', local(CHI, 2026, 3, 1, 10), REFUSE);
    const monday = await nextAllowedInstant('+12145550100', local(CHI, 2026, 3, 2, 10), REFUSE);

    // Assess
    expect(sunday).toEqual(local(CHI, 2026, 3, 1, 12));
    expect(monday).toBeNull();
  });

  it('Saturday night opens at noon on Sunday, not at 9:00; Sunday night at 9:00 on Monday', async () => {
    // Act
    const saturday = await nextAllowedInstant('+12145550100', local(CHI, 2026, 2, 28, 22), REFUSE);
    const sunday = await nextAllowedInstant('+12145550100', local(CHI, 2026, 3, 1, 21, 30), REFUSE);

    // Assess
    expect(saturday).toEqual(local(CHI, 2026, 3, 1, 12));
    expect(sunday).toEqual(local(CHI, 2026, 3, 2, 9));
  });

  it('New York on a Sunday at 10:00 is allowed (the rule is Texas alone)', async () => {
    // Act & Assess
    expect(await nextAllowedInstant('+12125550100', local(NY, 2026, 3, 1, 10), REFUSE)).toBeNull();
  });
});

describe('night and daylight saving', () => {
  it('at night the window opens at the next 8:00 local: the same morning after midnight, the next after 21:00', async () => {
    // Act
    const beforeDawn = await nextAllowedInstant('+12125550100', local(NY, ...WED, 3), REFUSE);
    const lateEvening = await nextAllowedInstant('+12125550100', local(NY, ...WED, 23), REFUSE);

    // Assess
    expect(beforeDawn).toEqual(local(NY, ...WED, 8));
    expect(lateEvening).toEqual(local(NY, 2026, 3, 5, 8));
  });

  it('the night clocks spring forward, 8:00 comes one hour sooner in UTC (12:00Z, not 13:00Z)', async () => {
    // Prepare: 1:00 EST on Sunday 8 March 2026 = 06:00Z; at 2:00 the clocks go to 3:00 (EDT, UTC-4).
    const at = new Date('2026-03-08T06:00:00Z');

    // Act
    const next = await nextAllowedInstant('+12125550100', at, REFUSE);

    // Assess
    expect(next).toEqual(new Date('2026-03-08T12:00:00Z'));
  });

  it('the night clocks fall back, 8:00 comes one hour later in UTC (13:00Z)', async () => {
    // Prepare: 0:30 EDT on Sunday 1 November 2026 = 04:30Z; at 2:00 the clocks go back to 1:00 (EST, UTC-5).
    const at = new Date('2026-11-01T04:30:00Z');

    // Act
    const next = await nextAllowedInstant('+12125550100', at, REFUSE);

    // Assess
    expect(next).toEqual(new Date('2026-11-01T13:00:00Z'));
  });
});

describe('a prefix with several zones (+1 208: Boise and Los Angeles)', () => {
  it('only the hours open in both: 8:30 Mountain (7:30 Pacific) waits for 8:00 Pacific', async () => {
    // Act
    const next = await nextAllowedInstant('+12085550100', local(DEN, ...WED, 8, 30), REFUSE);

    // Assess
    expect(next).toEqual(local(LA, ...WED, 8));
  });

  it('21:15 Mountain (20:15 Pacific) is closed in Boise: the next 8:00 Pacific', async () => {
    // Act
    const evening = await nextAllowedInstant('+12085550100', local(DEN, ...WED, 20, 30), REFUSE);
    const late = await nextAllowedInstant('+12085550100', local(DEN, ...WED, 21, 15), REFUSE);

    // Assess
    expect(evening).toBeNull();
    expect(late).toEqual(local(LA, 2026, 3, 5, 8));
  });
});

describe('a number whose zone cannot be told', () => {
  it("a toll-free number (every North American zone, Guam to St. John's) gets the hours open in all of them", async () => {
    // Act
    const morning = await nextAllowedInstant('+18005550100', local(NY, ...WED, 9), REFUSE);
    const evening = await nextAllowedInstant('+18005550100', local(NY, ...WED, 17, 30), REFUSE);

    // Assess: 8:00 in Guam (UTC+10) is 22:00 UTC; 21:00 in St. John's (UTC-3:30) is 00:30 UTC.
    expect(morning).toEqual(new Date('2026-03-04T22:00:00Z'));
    expect(evening).toBeNull();
  });

  it('zones that share no open hour under a narrow window: the contiguous United States, Eastern to Pacific', async () => {
    // Prepare: 08:00-12:00 leaves no hour common to UTC+10 and UTC-11.
    const policy: QuietHoursPolicy = { ...REFUSE, window: { start: '08:00', end: '12:00' } };

    // Act
    const next = await nextAllowedInstant('+18005550100', local(NY, ...WED, 9), policy);
    const inside = await nextAllowedInstant('+18005550100', local(NY, ...WED, 11, 30), policy);

    // Assess: 8:00 Pacific is 11:00 Eastern; noon Eastern closes it.
    expect(next).toEqual(local(NY, ...WED, 11));
    expect(inside).toBeNull();
  });

  it('no zone in the data (+800, international freephone): the window in UTC', async () => {
    // Act
    const next = await nextAllowedInstant('+80012345678', new Date('2026-03-04T07:00:00Z'), REFUSE);

    // Assess
    expect(await recipientPlace('+80012345678')).toEqual({ zones: [], state: null, northAmerican: false });
    expect(next).toEqual(new Date('2026-03-04T08:00:00Z'));
  });

  it('a number outside North America follows its own zone (+44 7700: London and the islands, one offset)', async () => {
    // Act
    const next = await nextAllowedInstant('+447700900123', local('Europe/London', ...WED, 22), REFUSE);

    // Assess
    expect(next).toEqual(local('Europe/London', 2026, 3, 5, 8));
  });
});

describe("the organization's window narrows", () => {
  const narrow = (start: string, end: string): QuietHoursPolicy => ({ ...REFUSE, window: { start, end } });

  it('10:00-18:00: 9:00 waits for 10:00 and 18:30 for 10:00 the next day, where the federal window was open', async () => {
    // Act
    const early = await nextAllowedInstant('+12125550100', local(NY, ...WED, 9), narrow('10:00', '18:00'));
    const late = await nextAllowedInstant('+12125550100', local(NY, ...WED, 18, 30), narrow('10:00', '18:00'));
    const inside = await nextAllowedInstant('+12125550100', local(NY, ...WED, 17, 59), narrow('10:00', '18:00'));

    // Assess
    expect(early).toEqual(local(NY, ...WED, 10));
    expect(late).toEqual(local(NY, 2026, 3, 5, 10));
    expect(inside).toBeNull();
  });

  it("never widens the state's window: 08:00-21:00 in Connecticut still opens at 9:00 and closes at 20:00", async () => {
    // Act
    const early = await nextAllowedInstant('+12035550100', local(NY, ...WED, 8, 30), narrow('08:00', '21:00'));
    const late = await nextAllowedInstant('+12035550100', local(NY, ...WED, 20, 30), narrow('08:00', '21:00'));

    // Assess
    expect(early).toEqual(local(NY, ...WED, 9));
    expect(late).toEqual(local(NY, 2026, 3, 5, 9));
  });
});

describe('the policy', () => {
  it('off: nothing is held, at any hour', async () => {
    // Act & Assess
    expect(await nextAllowedInstant('+13055550100', local(NY, ...WED, 3), QUIET_HOURS_OFF)).toBeNull();
    expect(quietHoursApply(QUIET_HOURS_OFF, 'marketing')).toBe(false);
  });

  it.each([
    ['all', undefined, true],
    ['all', 'transactional', true],
    ['all', 'marketing', true],
    ['marketing', 'marketing', true],
    ['marketing', 'transactional', false],
    ['marketing', undefined, false],
  ] as const)('applies to %s: a text of category %s is held to the window: %s', (appliesTo, category, applies) => {
    // Act & Assess
    expect(quietHoursApply({ ...REFUSE, appliesTo }, category)).toBe(applies);
    expect(quietHoursApply({ ...REFUSE, mode: 'defer', appliesTo }, category)).toBe(applies);
  });
});

describe('the refusal', () => {
  it('is 422 quiet_hours with allowedAt in the Error body', () => {
    // Act
    const response = toErrorResponse(new QuietHoursError(new Date('2026-03-05T13:00:00Z')), 'req-1');

    // Assess
    expect(response.statusCode).toBe(422);
    expect(response.body).toMatchObject({
      code: 'quiet_hours',
      allowedAt: '2026-03-05T13:00:00.000Z',
      requestId: 'req-1',
    });
    expect((response.body as { error: string }).error).toContain('2026-03-05T13:00:00.000Z');
  });
});
