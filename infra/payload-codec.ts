// DX-6: every payload in Temporal history is AES-256-GCM encrypted (key derived for the
// purpose from the application secret). History carries no content anyway (SPEC §9.3); this is
// defence in depth. The same codec serves the Temporal UI's codec endpoint.
import type { Payload, PayloadCodec } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import type { KeyRing } from './crypto';

export const ENCRYPTED_ENCODING = 'binary/encrypted';
const encoder = new TextEncoder();

export class EncryptionCodec implements PayloadCodec {
  constructor(private readonly keyring: KeyRing) {}

  async encode(payloads: Payload[]): Promise<Payload[]> {
    return payloads.map((payload) => ({
      metadata: { encoding: encoder.encode(ENCRYPTED_ENCODING) },
      data: this.keyring.encrypt(
        'temporal-payload',
        Buffer.from(temporal.api.common.v1.Payload.encode(payload).finish()),
      ),
    }));
  }

  async decode(payloads: Payload[]): Promise<Payload[]> {
    return payloads.map((payload) => {
      const encoding = payload.metadata?.encoding;
      if (!encoding || Buffer.from(encoding).toString() !== ENCRYPTED_ENCODING || !payload.data)
        return payload;
      const plain = this.keyring.decrypt('temporal-payload', Buffer.from(payload.data));
      return temporal.api.common.v1.Payload.decode(plain) as Payload;
    });
  }
}
