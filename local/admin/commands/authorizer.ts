import { flushAfter } from '../authorizer-cache';
import { defineCommand } from '../registry';

/**
 * `authorizer flush`: drops the stage's cached authorizer decisions, waits out the decisions in
 * flight and drops them again (what `key revoke`, `key rotate` and `tenant update` do after their
 * change: ../authorizer-cache.ts), to retry one that failed or after a change made to the table by
 * other means.
 */
export const authorizerFlush = defineCommand({
  words: ['authorizer', 'flush'],
  summary:
    'Drop every cached authorizer decision of the stage (--stack) or of the running local runtime, decisions in ' +
    "flight included (a few seconds on a stage): each key's next request is decided from the table",
  usage: '',
  options: {},
  parse: () => undefined,
  run: async (_args, context) => flushAfter('Nothing was changed', context, {}),
});
