// Every problem of a request body, collected (one ErrorItem each: type, path, message) so that a
// client fixes its request in one round trip; the agent rules (SPEC §8.2) report through it.
import type { ErrorItem } from './errors';

export type Json = Record<string, unknown>;
export const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
export const has = (o: Json, key: string) => Object.hasOwn(o, key);

function utf8Length(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) n += 1;
    else if (c < 0x800) n += 2;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
      n += 4; // a surrogate pair is one 4-byte code point
      i++;
    } else n += 3;
  }
  return n;
}

export class Problems {
  readonly items: ErrorItem[] = [];
  add(type: string, path: string, message: string): void {
    this.items.push({ type, path, message });
  }
  unknownFields(o: Json, allowed: readonly string[], path: string, label: string): void {
    for (const key of Object.keys(o))
      if (!allowed.includes(key))
        this.add('unknown_field', `${path}.${key}`, `${label}: unknown field ${key}`);
  }
  /** A template over `maxBytes` UTF-8 bytes (SPEC §18). */
  templateSize(template: string, path: string, maxBytes: number): void {
    const bytes = utf8Length(template);
    if (bytes > maxBytes)
      this.add('limit_exceeded', path, `${path} is ${bytes} bytes; the template limit is ${maxBytes} bytes`);
  }
}
