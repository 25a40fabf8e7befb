import { nextAllowedInstant } from '../../lambdas/contexts/texting/quiet-hours';

/**
 * The entry of test/infra/shipped-packages.test.ts: a function whose bundle reaches the quiet-hours window, as
 * the send path's does, answering the next allowed instant of a Florida number at 20:30 local.
 */
export const handler = async (): Promise<string | null> => {
  const next = await nextAllowedInstant('+13055550100', new Date('2026-03-05T01:30:00Z'), {
    mode: 'refuse',
    appliesTo: 'all',
    window: { start: '08:00', end: '21:00' },
  });
  return next?.toISOString() ?? null;
};
