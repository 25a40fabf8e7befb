import {
  DEFAULT_QUIET_HOURS,
  parseQuietHoursWindow,
  quietHoursOf,
} from '../../lambdas/contexts/tenants/quiet-hours-policy';
import { principalFromContext, principalToContext } from '../../lambdas/contexts/tenants/auth';
import { aPrincipal } from '../support/api-event';

describe("the organization's quiet-hours policy", () => {
  it('is off on a row that holds none (every organization before the policy existed)', () => {
    // Act & Assess
    expect(quietHoursOf({ id: 'x', name: 'Old' })).toEqual({
      mode: 'off',
      appliesTo: 'all',
      window: { start: '08:00', end: '21:00' },
    });
  });

  it('reads what the row holds', () => {
    // Prepare
    const quietHours = { mode: 'defer', appliesTo: 'marketing', window: { start: '09:30', end: '19:00' } };

    // Act & Assess
    expect(quietHoursOf({ quietHours })).toEqual(quietHours);
  });

  it.each([
    ['08:00-21:00', { start: '08:00', end: '21:00' }],
    ['09:30-17:30', { start: '09:30', end: '17:30' }],
    ['07:59-21:00', null],
    ['08:00-21:01', null],
    ['10:00-13:59', null],
    ['18:00-09:00', null],
    ['8:00-21:00', null],
    ['24:00-25:00', null],
  ])('the window %s is %j (it can only narrow 08:00-21:00, by at least 4 hours)', (text, window) => {
    // Act & Assess
    expect(parseQuietHoursWindow(text)).toEqual(window);
  });

  it("travels in the authorizer's context (GET /me), and a decision cached before it existed reads as off", () => {
    // Prepare
    const quietHours = { mode: 'refuse', appliesTo: 'all', window: { start: '09:00', end: '20:00' } } as const;
    const context = principalToContext({ ...aPrincipal(), quietHours });
    const { quietHours: _dropped, ...older } = context;

    // Act & Assess
    expect(principalFromContext(context).quietHours).toEqual(quietHours);
    expect(principalFromContext(older).quietHours).toEqual(DEFAULT_QUIET_HOURS);
  });
});
