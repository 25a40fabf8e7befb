import * as z from 'zod/mini';
import './zod-english';

/** `/calls/{id}`, `/contacts/{id}`: a malformed id names no row (404, lambdas/handlers/http/api-handler.ts). */
export const IdPath = z.object({ id: z.uuid() });
