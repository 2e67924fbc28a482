// Data protection (SPEC §17): one key per purpose, derived from the application secret with
// HKDF-SHA256; AES-256-GCM for everything stored or relayed; HMAC-SHA256 for API key secrets and
// for the full-text lexemes stored in place of words (db/keyed-lexemes.ts).
// The previous secret (rotation) is accepted for decryption and verification only.
import {
  createCipheriv,
  createDecipheriv,
  createHmac,
  hkdfSync,
  randomBytes,
  timingSafeEqual,
} from 'node:crypto';

type Purpose =
  | 'api-key-secret'
  | 'llm-api-key'
  | 'embedding-api-key'
  | 'content'
  | 'trace'
  | 'relay'
  | 'temporal-payload'
  | 'cursor'
  | 'codec-capability'
  | 'text-search';

const VERSION = 1;
const KEY_ID_BYTES = 8;
const IV_BYTES = 12;
const TAG_BYTES = 16;
const HEADER_BYTES = 1 + KEY_ID_BYTES + IV_BYTES + TAG_BYTES;

/** 72 bits: two distinct lexemes of a 10⁶-word vocabulary collide with odds of 1 in 10⁹. */
const LEXEME_BYTES = 9;

const CODEC_CAPABILITY_LABEL = 'temporal-ui-codec';

interface DerivedKey {
  key: Buffer;
  id: Buffer;
}

export class DecryptionError extends Error {
  override name = 'DecryptionError';
}

export class KeyRing {
  private readonly secrets: string[];
  private readonly cache = new Map<string, DerivedKey[]>();

  constructor(secret: string, previous?: string) {
    this.secrets = previous ? [secret, previous] : [secret];
  }

  /** Keys for a purpose, current first. */
  private keys(purpose: Purpose): DerivedKey[] {
    let keys = this.cache.get(purpose);
    if (!keys) {
      keys = this.secrets.map((secret) => {
        const key = Buffer.from(hkdfSync('sha256', secret, 'agentry/v1', purpose, 32));
        const id = createHmac('sha256', key).update('key-id').digest().subarray(0, KEY_ID_BYTES);
        return { key, id };
      });
      this.cache.set(purpose, keys);
    }
    return keys;
  }

  encrypt(purpose: Purpose, plaintext: Buffer | string): Buffer {
    const current = this.keys(purpose)[0]!;
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', current.key, iv);
    const body = Buffer.concat([cipher.update(plaintext), cipher.final()]);
    return Buffer.concat([Buffer.from([VERSION]), current.id, iv, cipher.getAuthTag(), body]);
  }

  decrypt(purpose: Purpose, blob: Buffer): Buffer {
    if (blob.length < HEADER_BYTES || blob[0] !== VERSION)
      throw new DecryptionError('Unrecognised ciphertext');
    const keyId = blob.subarray(1, 1 + KEY_ID_BYTES);
    const match = this.keys(purpose).find((k) => k.id.equals(keyId));
    if (!match) throw new DecryptionError('Ciphertext was encrypted with an unknown application secret');
    const iv = blob.subarray(1 + KEY_ID_BYTES, 1 + KEY_ID_BYTES + IV_BYTES);
    const tag = blob.subarray(1 + KEY_ID_BYTES + IV_BYTES, HEADER_BYTES);
    const decipher = createDecipheriv('aes-256-gcm', match.key, iv);
    decipher.setAuthTag(tag);
    try {
      return Buffer.concat([decipher.update(blob.subarray(HEADER_BYTES)), decipher.final()]);
    } catch {
      throw new DecryptionError('Ciphertext failed authentication');
    }
  }

  encryptJson(purpose: Purpose, value: unknown): Buffer {
    return this.encrypt(purpose, JSON.stringify(value));
  }

  decryptJson<T>(purpose: Purpose, blob: Buffer): T {
    return JSON.parse(this.decrypt(purpose, blob).toString('utf8')) as T;
  }

  /** HMAC under the current secret (what gets stored). */
  hmac(purpose: Purpose, data: string): Buffer {
    return createHmac('sha256', this.keys(purpose)[0]!.key).update(data).digest();
  }

  /**
   * The secret path segment of the Temporal UI's codec endpoint (DX-6): an HMAC under the
   * `codec-capability` key, base64url. Anyone holding it can decode history, like an admin key.
   */
  codecCapability(): string {
    return this.hmac('codec-capability', CODEC_CAPABILITY_LABEL).toString('base64url');
  }

  /** Whether `candidate` is the codec capability of the current or the previous secret. */
  verifyCodecCapability(candidate: string): boolean {
    const raw = Buffer.from(candidate, 'base64url');
    return (
      raw.toString('base64url') === candidate &&
      this.verifyHmac('codec-capability', CODEC_CAPABILITY_LABEL, raw)
    );
  }

  /**
   * Keyed lexemes: one function per secret (current first) from a text-search lexeme to its
   * HMAC-SHA256 under that secret's `text-search` key, cut to 72 bits, base64url (12 characters).
   */
  lexemeHashers(): ((lexeme: string) => string)[] {
    return this.keys('text-search').map(
      ({ key }) =>
        (lexeme: string) =>
          createHmac('sha256', key).update(lexeme).digest().subarray(0, LEXEME_BYTES).toString('base64url'),
    );
  }

  /** Constant-time check against the current and the previous secret. */
  verifyHmac(purpose: Purpose, data: string, expected: Buffer): boolean {
    let ok = false;
    for (const { key } of this.keys(purpose)) {
      const actual = createHmac('sha256', key).update(data).digest();
      if (actual.length === expected.length && timingSafeEqual(actual, expected)) ok = true;
    }
    return ok;
  }
}
