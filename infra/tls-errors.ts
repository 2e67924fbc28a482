// Node's error codes for a peer certificate that failed verification (OpenSSL's names, and
// Node's own for a name mismatch): a setting to fix, not an outage to wait out.
const CERTIFICATE_CODES =
  /^(UNABLE_TO_(GET_ISSUER_CERT|VERIFY_LEAF_SIGNATURE)|SELF_SIGNED_CERT_IN_CHAIN|DEPTH_ZERO_SELF_SIGNED_CERT|CERT_[A-Z_]+|ERR_TLS_CERT_ALTNAME_INVALID)/;

export function isCertificateError(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && CERTIFICATE_CODES.test(code);
}
