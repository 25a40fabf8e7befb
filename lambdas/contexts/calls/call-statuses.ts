/**
 * The statuses in which a call has ended, with no imports, so that the CDK construct can read them
 * (for the webhook router's filter criteria, lambdas/contexts/webhooks/filter-criteria.ts) without
 * loading the data-access modules. A call reaching one of them raises `call.completed`.
 */
export const TERMINAL_CALL_STATUSES = ['completed', 'failed', 'no-answer', 'busy', 'canceled'] as const;
