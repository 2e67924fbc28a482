// Certificates made by the tests: a private CA that issues server certificates (for the TLS
// proxies in front of the local services) and client certificates (mTLS), with lifetimes a test
// chooses (an expired one is a case). ECDSA P-256, as rustls (the Temporal core) and OpenSSL accept.
import { webcrypto } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
// @peculiar/x509 resolves its services through tsyringe, which needs the metadata polyfill first.
import 'reflect-metadata';
import * as x509 from '@peculiar/x509';

x509.cryptoProvider.set(webcrypto as unknown as Parameters<typeof x509.cryptoProvider.set>[0]);

type CryptoKeyPair = webcrypto.CryptoKeyPair;

const ALGORITHM = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' };
const DAY_MS = 86_400_000;

export interface Issued {
  certPem: string;
  keyPem: string;
}

export interface IssueOptions {
  commonName: string;
  /** Server certificates: the names a client checks (default localhost and 127.0.0.1). */
  dns?: string[];
  ips?: string[];
  client?: boolean;
  notBefore?: Date;
  notAfter?: Date;
}

export interface CertificateAuthority extends Issued {
  issue(options: IssueOptions): Promise<Issued>;
}

async function keyPair(): Promise<CryptoKeyPair> {
  return (await webcrypto.subtle.generateKey(ALGORITHM, true, ['sign', 'verify'])) as CryptoKeyPair;
}

async function keyPem(keys: CryptoKeyPair): Promise<string> {
  const der = await webcrypto.subtle.exportKey('pkcs8', keys.privateKey);
  return x509.PemConverter.encode(der, 'PRIVATE KEY');
}

export async function createCertificateAuthority(name: string): Promise<CertificateAuthority> {
  const keys = await keyPair();
  const ca = await x509.X509CertificateGenerator.createSelfSigned({
    name: `CN=${name}`,
    keys,
    signingAlgorithm: ALGORITHM,
    notBefore: new Date(Date.now() - DAY_MS),
    notAfter: new Date(Date.now() + 30 * DAY_MS),
    extensions: [
      new x509.BasicConstraintsExtension(true, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
    ],
  });
  return {
    certPem: ca.toString('pem'),
    keyPem: await keyPem(keys),
    async issue(options) {
      const leafKeys = await keyPair();
      const names: x509.JsonGeneralName[] = options.client
        ? [{ type: 'dns', value: options.commonName }]
        : [
            ...(options.dns ?? ['localhost']).map((value) => ({ type: 'dns' as const, value })),
            ...(options.ips ?? ['127.0.0.1']).map((value) => ({ type: 'ip' as const, value })),
          ];
      const cert = await x509.X509CertificateGenerator.create({
        subject: `CN=${options.commonName}`,
        issuer: ca.subject,
        publicKey: leafKeys.publicKey,
        signingKey: keys.privateKey,
        signingAlgorithm: ALGORITHM,
        notBefore: options.notBefore ?? new Date(Date.now() - DAY_MS),
        notAfter: options.notAfter ?? new Date(Date.now() + 7 * DAY_MS),
        extensions: [
          new x509.BasicConstraintsExtension(false, undefined, true),
          new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
          new x509.ExtendedKeyUsageExtension([
            options.client ? x509.ExtendedKeyUsage.clientAuth : x509.ExtendedKeyUsage.serverAuth,
          ]),
          new x509.SubjectAlternativeNameExtension(names),
          await x509.AuthorityKeyIdentifierExtension.create(keys.publicKey),
        ],
      });
      return { certPem: cert.toString('pem'), keyPem: await keyPem(leafKeys) };
    },
  };
}

/** Writes PEM files under `dir` ({ name: pem } → { name: path }). */
export function writePemFiles<K extends string>(dir: string, files: Record<K, string>): Record<K, string> {
  mkdirSync(dir, { recursive: true });
  const paths = {} as Record<K, string>;
  for (const [name, pem] of Object.entries(files) as Array<[K, string]>) {
    paths[name] = path.join(dir, `${name}.pem`);
    writeFileSync(paths[name], pem, { mode: 0o600 });
  }
  return paths;
}
