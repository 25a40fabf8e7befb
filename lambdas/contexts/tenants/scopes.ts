/** The five scopes of spec section 5. A key's effective scopes are its own intersected with these. */
export const SCOPES = ['calls.view.team', 'contacts.view', 'contacts.manage', 'sms.view', 'sms.send'] as const;
export type Scope = (typeof SCOPES)[number];

export const isScope = (value: string): value is Scope => (SCOPES as readonly string[]).includes(value);

export const effectiveScopes = (held: Iterable<string>): Scope[] => SCOPES.filter((scope) => new Set(held).has(scope));

/** Plans and which of them include API access (design section 7). */
export const PLANS = ['starter', 'pro', 'business'] as const;
export type Plan = (typeof PLANS)[number];
export const planHasApiAccess = (plan: string): boolean => plan === 'pro' || plan === 'business';
