import { createHash } from 'node:crypto';

/** SHA-256 in hex: how links and OAuth `state` values are stored (the values themselves never are). */
export const hashOf = (text: string) => createHash('sha256').update(text).digest('hex');
