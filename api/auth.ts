// Authentication (SPEC §1, AUTH-1, AUTH-6): `x-api-key` + `x-api-key-secret`, verified as an
// HMAC in constant time. A missing key id takes the same path as a wrong secret. Failed
// attempts are counted per client address; past the limit, wrong credentials get 429.
import type { RequestHandler } from 'express';
import type { RateLimiterAbstract } from 'rate-limiter-flexible';
import type { ApiKeyStore } from '../db/api-key-store';
import { TooManyRequests, Unauthenticated, Unavailable } from '../domain/errors';
import type { KeyRing } from '../infra/crypto';
import { isUuid } from '../infra/ids';
import type { Principal } from '../domain/permissions';

export interface AuthDeps {
  apiKeys: ApiKeyStore;
  keyring: KeyRing;
  failureLimiter: RateLimiterAbstract;
  failureLimit: number;
}

// A fixed HMAC to compare against when the key id is unknown, so both paths cost the same.
const DUMMY = Buffer.alloc(32);

export function authenticate(deps: AuthDeps): RequestHandler {
  const refuse = async (address: string): Promise<never> => {
    let blockedFor: number | null = null;
    try {
      const current = await deps.failureLimiter.get(address);
      if (current && current.consumedPoints >= deps.failureLimit) blockedFor = current.msBeforeNext;
      else await deps.failureLimiter.penalty(address, 1);
    } catch {
      throw new Unavailable('Authentication is temporarily unavailable');
    }
    if (blockedFor !== null) {
      throw new TooManyRequests(
        'Too many failed authentications; try again later',
        Math.max(1, Math.ceil(blockedFor / 1000)),
      );
    }
    throw new Unauthenticated('Invalid API key');
  };

  return async (req, _res, next) => {
    const id = req.header('x-api-key');
    const secret = req.header('x-api-key-secret');
    const address = req.ip ?? req.socket.remoteAddress ?? 'unknown';
    if (!id || !secret || !isUuid(id)) return refuse(address);
    const credentials = await deps.apiKeys.findCredentials(id.toLowerCase());
    const ok = deps.keyring.verifyHmac('api-key-secret', secret, credentials?.secretHmac ?? DUMMY);
    if (!credentials || !ok) return refuse(address);
    req.principal = { keyId: id.toLowerCase(), permissions: credentials.permissions };
    req.log = req.log.child({ apiKeyId: req.principal.keyId });
    next();
  };
}

/** The principal of an authenticated request. */
export function principalOf(req: { principal?: Principal }): Principal {
  if (!req.principal) throw new Unauthenticated('Invalid API key');
  return req.principal;
}
