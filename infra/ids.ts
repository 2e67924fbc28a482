// Server-generated ids are UUIDv7 (SPEC §1): time-ordered, so keyset pagination by
// (created_at, id) matches insertion order.
import { v7, validate, version } from 'uuid';

export const newId = (): string => v7();

/** Any RFC 4122/9562 UUID string (path ids are validated with this before touching the database). */
export const isUuid = (value: string): boolean => validate(value) && version(value) >= 1;
