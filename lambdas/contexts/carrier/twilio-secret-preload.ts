import { preloadTwilioSecret } from './internal/twilio-secret';

/**
 * Evaluated before the handler module in the Lambda bundles of the functions that use the Twilio
 * secret (lib/constructs/function-factory.ts injects it with esbuild's `inject`, for a function
 * created with `preload`). The bundle is an ES module, so this top-level await holds the
 * function's init until the secret is read: a missing, unreadable or unfilled secret fails the
 * init (and the function's error alarm) instead of the first request, and the handler modules can
 * build their configuration synchronously, as they do from plain environment values in the local
 * runtime and the tests, which never load this file.
 */
await preloadTwilioSecret();
