// DX-6: every Temporal payload is encrypted by a codec keyed from the application secret.
import { defaultPayloadConverter, type Payload } from '@temporalio/common';
import { KeyRing } from '../../infra/crypto';
import { ENCRYPTED_ENCODING, EncryptionCodec } from '../../infra/payload-codec';

const SECRET = 'application-secret-for-codec-tests-0123456789';
const MARKER = 'top-secret-marker-7f3a9c';

const codec = new EncryptionCodec(new KeyRing(SECRET));
const encodingOf = (p: Payload): string => Buffer.from(p.metadata!.encoding!).toString();

describe('EncryptionCodec (DX-6)', () => {
  it('DX-6: encode then decode gives back the same values', async () => {
    const values: unknown[] = [
      { executionId: 'e1', llmId: 'l1', temperature: 0.2, nested: { list: [1, 'two', null] } },
      'plain string',
      42,
      null,
      undefined,
      new Uint8Array([1, 2, 3]),
    ];
    const payloads = values.map((v) => defaultPayloadConverter.toPayload(v));
    const decoded = await codec.decode(await codec.encode(payloads));
    expect(decoded).toHaveLength(values.length);
    decoded.forEach((p, i) => {
      expect(encodingOf(p)).toBe(encodingOf(payloads[i]!));
      expect(defaultPayloadConverter.fromPayload(p)).toEqual(values[i]);
    });
  });

  it('DX-6: the encoded payload does not contain the plaintext', async () => {
    const payload = defaultPayloadConverter.toPayload({ apiKey: MARKER, text: `hello ${MARKER}` });
    expect(Buffer.from(payload.data!).includes(MARKER)).toBe(true); // sanity: it is there before
    const [encoded] = await codec.encode([payload]);
    expect(Buffer.from(encoded!.data!).includes(MARKER)).toBe(false);
    const metadataBytes = Object.values(encoded!.metadata ?? {}).map((v) => Buffer.from(v));
    expect(metadataBytes.some((b) => b.includes(MARKER))).toBe(false);
  });

  it('DX-6: the original metadata (encoding) is hidden too; the encoding says binary/encrypted', async () => {
    const [encoded] = await codec.encode([defaultPayloadConverter.toPayload({ a: 1 })]);
    expect(ENCRYPTED_ENCODING).toBe('binary/encrypted');
    expect(Object.keys(encoded!.metadata!)).toEqual(['encoding']);
    expect(encodingOf(encoded!)).toBe('binary/encrypted');
    expect(Buffer.from(encoded!.data!).includes('json/plain')).toBe(false);
  });

  it('DX-6: every encoding of the same payload differs (random IV)', async () => {
    const payload = defaultPayloadConverter.toPayload({ a: 1 });
    const [a] = await codec.encode([payload]);
    const [b] = await codec.encode([payload]);
    expect(Buffer.from(a!.data!).equals(Buffer.from(b!.data!))).toBe(false);
  });

  it('DX-6: payloads that are not encrypted pass through decode unchanged', async () => {
    const plain = defaultPayloadConverter.toPayload({ a: 1 });
    const noMetadata: Payload = { data: new Uint8Array([1, 2]) };
    const [p1, p2] = await codec.decode([plain, noMetadata]);
    expect(p1).toBe(plain);
    expect(p2).toBe(noMetadata);
  });

  it('DX-6: a payload encrypted under another application secret cannot be decoded', async () => {
    const other = new EncryptionCodec(new KeyRing('another-application-secret-0123456789abcdef'));
    const encoded = await other.encode([defaultPayloadConverter.toPayload({ a: 1 })]);
    await expect(codec.decode(encoded)).rejects.toThrow();
  });

  it('DX-6: a codec with the previous secret in its ring decodes payloads from before the rotation', async () => {
    const rotated = new EncryptionCodec(new KeyRing('the-next-application-secret-0123456789abc', SECRET));
    const encoded = await codec.encode([defaultPayloadConverter.toPayload({ a: MARKER })]);
    const [decoded] = await rotated.decode(encoded);
    expect(defaultPayloadConverter.fromPayload(decoded!)).toEqual({ a: MARKER });
  });
});
