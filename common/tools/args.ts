// Argument schemas and options more than one tool shares.
import { z } from 'zod';

/** A user id as the seeds spell it: a positive 32-bit integer. */
export const userId = z.number().int().positive().max(2_147_483_647);

/** The arguments of a lookup by user. */
export const byUserId = z.strictObject({ user_id: userId });

/** A read-only lookup: short, and safe to retry. */
export const LOOKUP_OPTIONS = { timeoutSeconds: 10, maxAttempts: 3 } as const;
