import * as z from 'zod/mini';
import { en } from 'zod/locales';

/**
 * zod/mini has no messages of its own (every issue would read "Invalid input"), and the API's 400s
 * quote zod's English ones (`displayName: Too small: ...`, `is required`: lambdas/handlers/http/validation.ts).
 * Only the English module is bundled (~3 KiB); `z.locales` would pull every language (~260 KiB).
 * Every module that builds schemas imports this, so any parse, wherever it runs, speaks English.
 *
 * How those modules write their schemas (each context's schemas.ts and requests/):
 * `zod/mini`, not classic zod: a quarter of the size and no per-instance methods to build at init
 * (bench/README.md). `.register(z.globalRegistry, { id })` names a schema as an OpenAPI component.
 * `register` annotates the instance itself, so it is only called on a schema built in place; a
 * shared one (`uuid`, `dateTime`, `e164`) is cloned first, or every use would carry the text.
 */
z.config(en());
