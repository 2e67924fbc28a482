// Authentication (SPEC §1, AUTH-1, AUTH-6): `x-api-key` + `x-api-key-secret`, verified as an
// HMAC in constant time. A missing key id takes the same path as a wrong secret, and its 401
// also names the missing header in `errors` (the `detail` stays SPEC §1's). Failed attempts are
// counted per client address; past the limit, wrong credentials get 429. The
// OpenAI-compatible routes (`/v1/...`) also take the key the SDKs' way, `Authorization: Bearer
// <key id>.<secret>` (issue 28), with the same permissions.
import type { Request, RequestHandler } from 'express';
import type { RateLimiterAbstract } from 'rate-limiter-flexible';
import type { ApiKeyStore } from '../db/api-key-store';
import { TooManyRequests, Unauthenticated, Unavailable, type ErrorItem } from '../domain/errors';
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

/** The key's principal when `id` names a key and `secret` is its secret, else null (constant-time). */
export async function verifyCredentials(
  deps: Pick<AuthDeps, 'apiKeys' | 'keyring'>,
  id: string | undefined,
  secret: string | undefined,
): Promise<Principal | null> {
  if (!id || !secret || !isUuid(id)) return null;
  const keyId = id.toLowerCase();
  const credentials = await deps.apiKeys.findCredentials(keyId);
  const ok = deps.keyring.verifyHmac('api-key-secret', secret, credentials?.secretHmac ?? DUMMY);
  return credentials && ok ? { keyId, permissions: credentials.permissions } : null;
}

/** AUTH-6: counts a failed authentication of `address`; 429 past the limit, else 401. */
export async function refuseAuthentication(
  deps: Pick<AuthDeps, 'failureLimiter' | 'failureLimit'>,
  address: string,
  missing: ErrorItem[] = [],
): Promise<never> {
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
  throw new Unauthenticated('Invalid API key', missing.length > 0 ? missing : undefined);
}

/** `Authorization: Bearer <key id>.<secret>` (the codec server's and the OpenAI SDKs' form). */
export function bearerCredentials(header: string | undefined): { id?: string; secret?: string } {
  const match = /^Bearer ([^.\s]+)\.(\S+)$/i.exec(header ?? '');
  return match ? { id: match[1]!, secret: match[2]! } : {};
}

/** The routes that speak the OpenAI Responses protocol (api/routes/responses.ts). */
export const isOpenAiPath = (url: string): boolean => url.startsWith('/v1/');

const missingHeader = (header: string, what: string): ErrorItem => ({
  type: 'missing_header',
  path: header,
  message: `No ${header} header: send ${what} in it`,
});

/**
 * The request's key: its x-api-key headers, else (on `/v1/...` only) its Bearer token; and the
 * headers it lacks (absent or empty), which the 401 names.
 */
function credentialsOf(req: Request): { id?: string; secret?: string; missing: ErrorItem[] } {
  const id = req.header('x-api-key');
  const authorization = req.header('authorization');
  if (id === undefined && isOpenAiPath(req.originalUrl))
    return authorization
      ? { ...bearerCredentials(authorization), missing: [] }
      : { missing: [missingHeader('authorization', 'Bearer <key id>.<secret>')] };
  const secret = req.header('x-api-key-secret');
  const missing = [
    ...(id ? [] : [missingHeader('x-api-key', "the API key's id")]),
    ...(secret ? [] : [missingHeader('x-api-key-secret', "the API key's secret")]),
  ];
  return { id, secret, missing };
}

export const clientAddress = (req: Request): string => req.ip ?? req.socket.remoteAddress ?? 'unknown';

export function authenticate(deps: AuthDeps): RequestHandler {
  return async (req, _res, next) => {
    const { id, secret, missing } = credentialsOf(req);
    const principal = await verifyCredentials(deps, id, secret);
    if (!principal) return refuseAuthentication(deps, clientAddress(req), missing);
    req.principal = principal;
    req.log = req.log.child({ apiKeyId: principal.keyId });
    next();
  };
}

/** The principal of an authenticated request. */
export function principalOf(req: { principal?: Principal }): Principal {
  if (!req.principal) throw new Unauthenticated('Invalid API key');
  return req.principal;
}
