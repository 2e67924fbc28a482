// Reading settings from the environment: each read checks its value, collects a problem naming the
// variable and the accepted range instead of throwing (so every problem is reported at once), and
// records the setting with its default, so the documented list of settings can be checked
// against what the code reads (test/unit/settings-docs.test.ts).

import { isUuid } from './ids';

export type Env = Record<string, string | undefined>;

/** A setting the configuration reads, with its default as an environment value ('' when none). */
export interface SettingRead {
  name: string;
  default: string;
}

const range = (min: number, max: number): string =>
  max === Number.MAX_SAFE_INTEGER ? `≥ ${min}` : `between ${min} and ${max}`;

export class Reader {
  readonly errors: string[] = [];
  readonly settings = new Map<string, SettingRead>();

  constructor(readonly env: Env) {}

  private raw(name: string, fallback: unknown): string | undefined {
    if (!this.settings.has(name))
      this.settings.set(name, { name, default: fallback === undefined ? '' : String(fallback) });
    const v = this.env[name];
    return v === undefined || v === '' ? undefined : v;
  }

  str(name: string): string | undefined;
  str(name: string, fallback: string): string;
  str(name: string, fallback?: string): string | undefined {
    return this.raw(name, fallback) ?? fallback;
  }

  /** One of a fixed set of values. */
  oneOf<T extends string>(name: string, allowed: readonly T[], fallback: T): T {
    const raw = this.raw(name, fallback);
    if (raw === undefined) return fallback;
    if ((allowed as readonly string[]).includes(raw)) return raw as T;
    this.errors.push(`${name} must be one of ${allowed.join(', ')} (got "${raw}")`);
    return fallback;
  }

  int(name: string, fallback: number, min = 0, max = Number.MAX_SAFE_INTEGER): number {
    const raw = this.raw(name, fallback);
    if (raw === undefined) return fallback;
    const n = Number(raw);
    if (!/^-?\d+$/.test(raw.trim()) || !Number.isSafeInteger(n) || n < min || n > max) {
      this.errors.push(`${name} must be an integer ${range(min, max)} (got "${raw}")`);
      return fallback;
    }
    return n;
  }

  num(name: string, fallback: number, min: number, max = Number.MAX_SAFE_INTEGER): number {
    const raw = this.raw(name, fallback);
    if (raw === undefined) return fallback;
    const n = Number(raw);
    if (raw.trim() === '' || !Number.isFinite(n) || n < min || n > max) {
      this.errors.push(`${name} must be a number ${range(min, max)} (got "${raw}")`);
      return fallback;
    }
    return n;
  }

  uuid(name: string): string | undefined {
    const raw = this.raw(name, undefined);
    if (raw !== undefined && !isUuid(raw)) {
      this.errors.push(`${name} must be a UUID (got "${raw}")`);
      return undefined;
    }
    return raw?.toLowerCase();
  }

  bool(name: string, fallback: boolean): boolean {
    const raw = this.raw(name, fallback);
    if (raw === undefined) return fallback;
    if (raw === 'true' || raw === 'false') return raw === 'true';
    this.errors.push(`${name} must be true or false (got "${raw}")`);
    return fallback;
  }
}

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n- ${problems.join('\n- ')}`);
  }
}
