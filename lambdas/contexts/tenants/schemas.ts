import * as z from 'zod/mini';
import '../../shared/schemas/zod-english';
import { QUIET_HOURS_MODES, QUIET_HOURS_SCOPES } from './quiet-hours-policy';
import { SCOPES } from './scopes';

/**
 * The response shapes of the tenants context: the organization and key a request runs as
 * (`GET /me`). Like every context's schemas, they type the code and generate the OpenAPI
 * components, so the two cannot disagree.
 * Written as lambdas/shared/schemas/zod-english.ts says (zod/mini; `register` only in place).
 */
const dateTime = z.iso.datetime({ offset: true });
const uuid = z.uuid();

export const TenantSchema = z
  .object({ id: uuid, name: z.string(), slug: z.string(), plan: z.string() })
  .register(z.globalRegistry, { id: 'Tenant' });

export const ApiKeyInfoSchema = z
  .object({
    id: uuid,
    name: z.string(),
    prefix: z.string().register(z.globalRegistry, { description: 'The visible first characters of the key' }),
    expiresAt: z.nullable(dateTime),
    createdAt: dateTime,
  })
  .register(z.globalRegistry, { id: 'ApiKeyInfo' });

const hhmm = z.string().check(z.regex(/^\d{2}:\d{2}$/));

export const QuietHoursSchema = z
  .object({
    mode: z.enum(QUIET_HOURS_MODES).register(z.globalRegistry, {
      description:
        "`off` (the default): texts go at any hour; `refuse`: a text outside its recipient's window is 422 " +
        '`quiet_hours` with `allowedAt`; `defer`: it is scheduled for `allowedAt`',
    }),
    appliesTo: z.enum(QUIET_HOURS_SCOPES).register(z.globalRegistry, {
      description: '`all` texts, or only those a request marks `"category": "marketing"`',
    }),
    window: z.object({ start: hhmm, end: hhmm }).register(z.globalRegistry, {
      description:
        "The organization's own window, local to the recipient, inside 08:00-21:00: it narrows the federal and " +
        'state windows, never widens them',
    }),
  })
  .register(z.globalRegistry, {
    id: 'QuietHours',
    description:
      'Whether texts are held to their recipient\'s local hours (docs/api.md, "Quiet hours"); set by the operator',
  });

export const MeSchema = z
  .object({
    tenant: z.nullable(TenantSchema),
    apiKey: z.nullable(ApiKeyInfoSchema),
    permissions: z.array(z.enum(SCOPES)),
    rateLimit: z.object({ requestsPerMinute: z.int() }),
    quietHours: QuietHoursSchema,
  })
  .register(z.globalRegistry, { id: 'Me' });

export type Me = z.infer<typeof MeSchema>;
