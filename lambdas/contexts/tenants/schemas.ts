import * as z from 'zod/mini';
import '../../shared/schemas/zod-english';
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

export const MeSchema = z
  .object({
    tenant: z.nullable(TenantSchema),
    apiKey: z.nullable(ApiKeyInfoSchema),
    permissions: z.array(z.enum(SCOPES)),
    rateLimit: z.object({ requestsPerMinute: z.int() }),
  })
  .register(z.globalRegistry, { id: 'Me' });

export type Me = z.infer<typeof MeSchema>;
