import * as z from 'zod/mini';
import { en } from 'zod/locales';

/**
 * zod/mini has no messages of its own (every issue would read "Invalid input"), and the API's 400s
 * quote zod's English ones (`displayName: Too small: ...`, `is required`: http/validation.ts).
 * Only the English module is bundled (~3 KiB); `z.locales` would pull every language (~260 KiB).
 * Every module that builds schemas imports this, so any parse, wherever it runs, speaks English.
 */
z.config(en());
