// Argument schemas more than one tool shares.
import { z } from 'zod';

/** A user id as the seeds spell it: a positive 32-bit integer. */
export const userId = z.number().int().positive().max(2_147_483_647);
