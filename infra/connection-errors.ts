// What kind of failure a connection to a service (PostgreSQL, Redis) met, from the error codes
// of Node and the drivers, told apart once: a certificate that failed verification or refused
// credentials are settings to fix; an unreachable service may be an outage to wait out.
export type ConnectionProblem = 'certificate' | 'credentials' | 'unreachable';

/** OpenSSL's names for a peer certificate that failed verification, and Node's for a name mismatch. */
const CERTIFICATE_CODES =
  /^(UNABLE_TO_(GET_ISSUER_CERT|VERIFY_LEAF_SIGNATURE)|SELF_SIGNED_CERT_IN_CHAIN|DEPTH_ZERO_SELF_SIGNED_CERT|CERT_[A-Z_]+|ERR_TLS_CERT_ALTNAME_INVALID)/;
const UNREACHABLE_CODES =
  /^(ECONNREFUSED|ENOTFOUND|EAI_AGAIN|ETIMEDOUT|EHOSTUNREACH|ENETUNREACH|ECONNRESET)$/;
/** PostgreSQL's invalid password / authorization (SQLSTATE), Redis's refused AUTH. */
const CREDENTIAL_CODES = /^(28P01|28000)$/;
const CREDENTIAL_REPLIES = /^(WRONGPASS|NOAUTH)\b/;

export function connectionProblem(err: unknown): ConnectionProblem | undefined {
  const { code, message } = (err ?? {}) as { code?: unknown; message?: unknown };
  if (typeof code === 'string') {
    if (CERTIFICATE_CODES.test(code)) return 'certificate';
    if (CREDENTIAL_CODES.test(code)) return 'credentials';
    if (UNREACHABLE_CODES.test(code)) return 'unreachable';
  }
  if (typeof message === 'string' && CREDENTIAL_REPLIES.test(message)) return 'credentials';
  return undefined;
}

export const isCertificateError = (err: unknown): boolean => connectionProblem(err) === 'certificate';

/** SQLSTATEs of a lost or refused PostgreSQL connection: class 08, and the server shutting down or starting. */
const DATABASE_CONNECTION_CODES = /^(08[0-9A-Z]{3}|57P0[123])$/;
/**
 * node-postgres's own errors for a connection that ended under a query or broke before it. knex
 * puts the statement before the driver's message (`<sql> - Connection terminated unexpectedly`).
 */
const DATABASE_CONNECTION_MESSAGES =
  /(^|\s-\s)(Connection terminated|Client has encountered a connection error)/;

/**
 * Whether a query failed because its PostgreSQL connection was lost or could not be had (a
 * dropped connection, a restart, a failover, a pool that could not connect in time), so that the
 * same query may succeed on a new one.
 */
export function isDatabaseConnectionLost(err: unknown): boolean {
  if (connectionProblem(err) === 'unreachable') return true;
  const { code, message, name } = (err ?? {}) as { code?: unknown; message?: unknown; name?: unknown };
  return (
    name === 'KnexTimeoutError' ||
    (typeof code === 'string' && DATABASE_CONNECTION_CODES.test(code)) ||
    (typeof message === 'string' && DATABASE_CONNECTION_MESSAGES.test(message))
  );
}
