/**
 * What a send request may mark a text as: quiet hours may apply to marketing texts only (the
 * organization's choice). No imports, so a request schema and the response schemas share it
 * without importing each other.
 */
export const MESSAGE_CATEGORIES = ['marketing', 'transactional'] as const;
export type MessageCategory = (typeof MESSAGE_CATEGORIES)[number];
