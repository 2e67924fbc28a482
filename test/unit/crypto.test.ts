// SPEC §17 data protection and AUTH-1 secret HMACs: the KeyRing.
import { DecryptionError, KeyRing } from '../../infra/crypto';

const OLD = 'old-application-secret-0123456789abcdef';
const NEW = 'new-application-secret-fedcba9876543210';
const PLAIN = 'sk-live-very-secret-api-key';

describe('KeyRing encryption (§17)', () => {
  it('§17: encrypt then decrypt returns the plaintext, strings and bytes alike', () => {
    const ring = new KeyRing(NEW);
    expect(ring.decrypt('llm-api-key', ring.encrypt('llm-api-key', PLAIN)).toString('utf8')).toBe(PLAIN);
    const bytes = Buffer.from([0, 1, 2, 255, 254]);
    expect(ring.decrypt('content', ring.encrypt('content', bytes))).toEqual(bytes);
    expect(ring.decrypt('content', ring.encrypt('content', ''))).toEqual(Buffer.alloc(0));
  });

  it('§17: JSON round trip', () => {
    const ring = new KeyRing(NEW);
    const value = { a: 1, b: ['x', null], c: { d: true } };
    expect(ring.decryptJson('relay', ring.encryptJson('relay', value))).toEqual(value);
  });

  it('§17: the ciphertext does not contain the plaintext', () => {
    const ring = new KeyRing(NEW);
    expect(ring.encrypt('llm-api-key', PLAIN).includes(Buffer.from(PLAIN))).toBe(false);
  });

  it('§17: the same plaintext encrypts differently every time (random IV)', () => {
    const ring = new KeyRing(NEW);
    const a = ring.encrypt('content', PLAIN);
    const b = ring.encrypt('content', PLAIN);
    expect(a.equals(b)).toBe(false);
    expect(ring.decrypt('content', a)).toEqual(ring.decrypt('content', b));
  });

  it('§17: purposes are isolated: another purpose cannot decrypt', () => {
    const ring = new KeyRing(NEW);
    const blob = ring.encrypt('llm-api-key', PLAIN);
    expect(() => ring.decrypt('embedding-api-key', blob)).toThrow(DecryptionError);
    expect(() => ring.decrypt('content', blob)).toThrow(DecryptionError);
  });

  it('§17: another application secret cannot decrypt', () => {
    const blob = new KeyRing(NEW).encrypt('content', PLAIN);
    expect(() => new KeyRing(OLD).decrypt('content', blob)).toThrow(DecryptionError);
  });

  it('§17: tampering with any part of the ciphertext is detected', () => {
    const ring = new KeyRing(NEW);
    const blob = ring.encrypt('content', PLAIN);
    for (let i = 0; i < blob.length; i++) {
      const tampered = Buffer.from(blob);
      tampered[i] = tampered[i]! ^ 0x01;
      expect(() => ring.decrypt('content', tampered)).toThrow(DecryptionError);
    }
    expect(() => ring.decrypt('content', blob.subarray(0, blob.length - 1))).toThrow(DecryptionError);
    expect(() => ring.decrypt('content', Buffer.concat([blob, Buffer.from([0])]))).toThrow(DecryptionError);
    expect(() => ring.decrypt('content', Buffer.alloc(10))).toThrow(DecryptionError);
    expect(() => ring.decrypt('content', Buffer.alloc(0))).toThrow(DecryptionError);
  });

  it('§17: rotation: data encrypted under the previous secret still decrypts', () => {
    const before = new KeyRing(OLD).encrypt('llm-api-key', PLAIN);
    const rotated = new KeyRing(NEW, OLD);
    expect(rotated.decrypt('llm-api-key', before).toString()).toBe(PLAIN);
  });

  it('§17: rotation: new encryptions use the new secret only', () => {
    const rotated = new KeyRing(NEW, OLD);
    const after = rotated.encrypt('llm-api-key', PLAIN);
    expect(() => new KeyRing(OLD).decrypt('llm-api-key', after)).toThrow(DecryptionError);
    expect(new KeyRing(NEW).decrypt('llm-api-key', after).toString()).toBe(PLAIN);
  });

  it('§17: once the previous secret is dropped, its data no longer decrypts', () => {
    const before = new KeyRing(OLD).encrypt('content', PLAIN);
    expect(() => new KeyRing(NEW).decrypt('content', before)).toThrow(DecryptionError);
  });
});

describe('KeyRing HMAC (AUTH-1)', () => {
  it('AUTH-1: the HMAC is deterministic, 32 bytes, and verifies', () => {
    const ring = new KeyRing(NEW);
    const mac = ring.hmac('api-key-secret', 'the-secret');
    expect(mac).toHaveLength(32);
    expect(ring.hmac('api-key-secret', 'the-secret').equals(mac)).toBe(true);
    expect(ring.verifyHmac('api-key-secret', 'the-secret', mac)).toBe(true);
  });

  it('AUTH-1: the HMAC is keyed by the application secret and the purpose', () => {
    const mac = new KeyRing(NEW).hmac('api-key-secret', 'the-secret');
    expect(new KeyRing(OLD).hmac('api-key-secret', 'the-secret').equals(mac)).toBe(false);
    expect(new KeyRing(NEW).hmac('cursor', 'the-secret').equals(mac)).toBe(false);
    expect(new KeyRing(OLD).verifyHmac('api-key-secret', 'the-secret', mac)).toBe(false);
    expect(new KeyRing(NEW).verifyHmac('cursor', 'the-secret', mac)).toBe(false);
  });

  it('AUTH-1: verifyHmac is false for wrong data or a wrong length', () => {
    const ring = new KeyRing(NEW);
    const mac = ring.hmac('api-key-secret', 'the-secret');
    expect(ring.verifyHmac('api-key-secret', 'the-secreT', mac)).toBe(false);
    expect(ring.verifyHmac('api-key-secret', 'the-secret', mac.subarray(0, 31))).toBe(false);
    expect(ring.verifyHmac('api-key-secret', 'the-secret', Buffer.concat([mac, Buffer.from([0])]))).toBe(
      false,
    );
    expect(ring.verifyHmac('api-key-secret', 'the-secret', Buffer.alloc(0))).toBe(false);
  });

  it('§17 rotation: HMACs made under the current or the previous secret verify; new ones use the current', () => {
    const oldMac = new KeyRing(OLD).hmac('api-key-secret', 'the-secret');
    const newMac = new KeyRing(NEW).hmac('api-key-secret', 'the-secret');
    const rotated = new KeyRing(NEW, OLD);
    expect(rotated.verifyHmac('api-key-secret', 'the-secret', oldMac)).toBe(true);
    expect(rotated.verifyHmac('api-key-secret', 'the-secret', newMac)).toBe(true);
    expect(rotated.hmac('api-key-secret', 'the-secret').equals(newMac)).toBe(true);
    expect(rotated.verifyHmac('api-key-secret', 'other', oldMac)).toBe(false);
  });
});

describe('KeyRing codec capability (DX-6)', () => {
  it('DX-6: the capability is a stable 43-character base64url secret of the application secret alone', () => {
    const cap = new KeyRing(NEW).codecCapability();
    expect(cap).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(new KeyRing(NEW, OLD).codecCapability()).toBe(cap);
    expect(new KeyRing(OLD).codecCapability()).not.toBe(cap);
    // Its own HKDF purpose: not an HMAC any other purpose would produce.
    expect(new KeyRing(NEW).hmac('api-key-secret', 'temporal-ui-codec').toString('base64url')).not.toBe(cap);
  });

  it("DX-6: verification accepts the current and the previous secret's capability, nothing else", () => {
    const rotated = new KeyRing(NEW, OLD);
    const cap = new KeyRing(NEW).codecCapability();
    expect(rotated.verifyCodecCapability(cap)).toBe(true);
    expect(rotated.verifyCodecCapability(new KeyRing(OLD).codecCapability())).toBe(true);
    expect(new KeyRing(NEW).verifyCodecCapability(new KeyRing(OLD).codecCapability())).toBe(false);
    const raw = Buffer.from(cap, 'base64url');
    for (const wrong of [
      '',
      cap.slice(0, -1),
      `${cap}A`,
      `${cap}=`,
      Buffer.concat([raw, Buffer.from([0])]).toString('base64url'),
      raw.toString('hex'),
      raw.toString('base64'),
    ]) {
      expect({ wrong, ok: rotated.verifyCodecCapability(wrong) }).toEqual({ wrong, ok: wrong === cap });
    }
  });
});
