import { z } from 'zod';

/** A time as the control API takes one (`since`): an ISO 8601 date-time with its offset. `check --since` holds to it too. */
export const isoTimeSchema = z.iso.datetime({ offset: true });
