import { apiKeyState, type ApiKeyRecord } from '../../lambdas/contexts/tenants/api-keys';

/** The state `key list`, `tenant show` and `key rotate` print for a key. */
const NOW = new Date('2026-11-26T12:00:00.000Z');
const key = (fields: Partial<ApiKeyRecord>): ApiKeyRecord => ({
  id: '0199a000-0000-7000-8000-0000000000aa',
  tenantId: '0199a000-0000-7000-8000-0000000000bb',
  name: 'server',
  prefix: 'cct_live_ab',
  scopes: ['sms.view'],
  expiresAt: null,
  createdAt: '2026-11-01T00:00:00.000Z',
  revokedAt: null,
  replacedBy: null,
  ...fields,
});

describe('apiKeyState', () => {
  it.each([
    ['active', {}],
    ['active', { expiresAt: '2026-11-26T12:00:01.000Z' }],
    ['rotating_out', { replacedBy: '0199a000-0000-7000-8000-0000000000cc', expiresAt: '2026-11-27T12:00:00.000Z' }],
    ['expired', { expiresAt: '2026-11-26T12:00:00.000Z' }],
    ['expired', { replacedBy: '0199a000-0000-7000-8000-0000000000cc', expiresAt: '2026-11-26T11:00:00.000Z' }],
    ['revoked', { revokedAt: '2026-11-20T00:00:00.000Z', expiresAt: '2026-11-21T00:00:00.000Z' }],
  ] as const)('is %s for %j', (state, fields) => {
    expect(apiKeyState(key(fields), NOW)).toBe(state);
  });
});
