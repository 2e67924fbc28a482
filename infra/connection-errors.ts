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
