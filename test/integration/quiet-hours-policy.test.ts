import { createTestTable } from '../support/table';
import { createTenant, getTenant, updateTenant } from '../../lambdas/contexts/tenants/tenants';
import { readOrganizationRow } from '../../lambdas/contexts/tenants/billing-policy';
import { quietHoursOf } from '../../lambdas/contexts/tenants/quiet-hours-policy';
import { ValidationError } from '../../lambdas/shared/errors';

beforeAll(createTestTable);

describe("the organization's quiet-hours policy on its row", () => {
  it('is off for a new organization, and an update changes only the parts it names', async () => {
    // Prepare
    const tenant = await createTenant({ name: 'Quiet Org' });

    // Act
    await updateTenant(tenant.id, { quietHours: { mode: 'refuse', window: { start: '09:00', end: '20:00' } } });
    await updateTenant(tenant.id, { quietHours: { appliesTo: 'marketing' } });

    // Assess: the send path's strongly consistent read of the row gives the same policy as the operator's.
    expect(tenant.quietHours).toEqual({ mode: 'off', appliesTo: 'all', window: { start: '08:00', end: '21:00' } });
    const expected = { mode: 'refuse', appliesTo: 'marketing', window: { start: '09:00', end: '20:00' } };
    expect((await getTenant(tenant.id))?.quietHours).toEqual(expected);
    expect(quietHoursOf(await readOrganizationRow(tenant.id))).toEqual(expected);
  });

  it('is set at creation, and a window wider than 08:00-21:00 is refused naming it', async () => {
    // Act
    const tenant = await createTenant({ name: 'Deferring Org', quietHours: { mode: 'defer' } });
    const wider = updateTenant(tenant.id, { quietHours: { window: { start: '07:00', end: '21:00' } } });

    // Assess
    expect(tenant.quietHours.mode).toBe('defer');
    await expect(wider).rejects.toThrow(ValidationError);
    await expect(wider).rejects.toThrow(/^quietHours\.window: /);
    expect((await getTenant(tenant.id))?.quietHours.window).toEqual({ start: '08:00', end: '21:00' });
  });
});
