// Checks of the PEM files a TLS setting names, made when the configuration is read, so that an
// unreadable, malformed, expired or mismatched file is a problem naming its setting at start-up
// instead of a handshake error later. Problems are pushed to a list (infra/config-reader.ts);
// contents are never quoted.
import { X509Certificate, createPrivateKey, type KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';

/** A PEM text and the setting that named it (for messages). */
export interface Pem {
  pem: string;
  setting: string;
}

/** The file's text, or a problem naming the setting. */
export function readPem(setting: string, path: string, problems: string[]): Pem | undefined {
  try {
    return { pem: readFileSync(path, 'utf8'), setting };
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? (err as Error).message;
    problems.push(`${setting}: cannot read ${path} (${code})`);
    return undefined;
  }
}

const BLOCK = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g;

/** Every certificate of a bundle parses and is valid now; `what` says what it should hold. */
export function checkCertificates(
  value: Pem,
  what: string,
  problems: string[],
  now = Date.now(),
): X509Certificate[] {
  const blocks = value.pem.match(BLOCK) ?? [];
  if (blocks.length === 0) problems.push(`${value.setting}: holds no PEM certificate (${what})`);
  const parsed: X509Certificate[] = [];
  for (const block of blocks) {
    try {
      parsed.push(new X509Certificate(block));
    } catch {
      problems.push(`${value.setting}: a block is not a valid PEM certificate`);
    }
  }
  for (const c of parsed) {
    const subject = c.subject.replace(/\n/g, ', ');
    if (Date.parse(c.validTo) < now)
      problems.push(`${value.setting}: the certificate ${subject} expired on ${c.validTo}`);
    else if (Date.parse(c.validFrom) > now)
      problems.push(`${value.setting}: the certificate ${subject} is not valid before ${c.validFrom}`);
  }
  return parsed;
}

/** A client certificate and its private key: both sound, and the key is the certificate's. */
export function checkKeyPair(cert: Pem, key: Pem, problems: string[]): void {
  const [leaf] = checkCertificates(cert, 'the client certificate', problems);
  let privateKey: KeyObject | undefined;
  try {
    privateKey = createPrivateKey(key.pem);
  } catch {
    problems.push(`${key.setting}: not a PEM private key (PKCS#8, PKCS#1 or SEC1), or encrypted`);
  }
  if (leaf && privateKey && !leaf.checkPrivateKey(privateKey))
    problems.push(`${key.setting} is not the key of the certificate in ${cert.setting}`);
}
