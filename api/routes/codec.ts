// DX-6 codec server for the Temporal UI: `POST /temporal-codec/encode|decode` over the same
// payload codec as client and worker. Two ways in: an admin key (`Authorization: Bearer <key
// id>.<secret>`, for the CLI), or the capability URL `/temporal-codec/<capability>/…` that the UI
// is configured with (the UI cannot send our header). CORS for the configured UI origins only.
import express, { Router, type RequestHandler } from 'express';
import type { Payload } from '@temporalio/common';
import { Forbidden, InvalidInput } from '../../domain/errors';
import { isAdmin } from '../../domain/permissions';
import { DecryptionError } from '../../infra/crypto';
import type { EncryptionCodec } from '../../infra/payload-codec';
import {
  bearerCredentials,
  clientAddress,
  refuseAuthentication,
  verifyCredentials,
  type AuthDeps,
} from '../auth';

interface CodecRouteDeps extends AuthDeps {
  codec: EncryptionCodec;
  codecCorsOrigins: string[];
}

interface JsonPayload {
  metadata?: Record<string, string>;
  data?: string;
}

const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

const isJsonPayload = (p: unknown): p is JsonPayload =>
  isRecord(p) &&
  (p.data === undefined || typeof p.data === 'string') &&
  (p.metadata === undefined ||
    (isRecord(p.metadata) && Object.values(p.metadata).every((v) => typeof v === 'string')));

const fromJson = (p: JsonPayload): Payload => ({
  metadata: Object.fromEntries(
    Object.entries(p.metadata ?? {}).map(([k, v]) => [k, Buffer.from(v, 'base64')]),
  ),
  data: Buffer.from(p.data ?? '', 'base64'),
});

const toJson = (p: Payload): JsonPayload => ({
  metadata: Object.fromEntries(
    Object.entries(p.metadata ?? {}).map(([k, v]) => [k, Buffer.from(v ?? []).toString('base64')]),
  ),
  data: Buffer.from(p.data ?? []).toString('base64'),
});

export function codecRoutes(deps: CodecRouteDeps): Router {
  const router = Router();

  const cors: RequestHandler = (req, res, next) => {
    const origin = req.header('origin');
    if (origin && deps.codecCorsOrigins.includes(origin)) {
      res.set({
        'Access-Control-Allow-Origin': origin,
        'Access-Control-Allow-Methods': 'POST, OPTIONS',
        'Access-Control-Allow-Headers': 'Content-Type, Authorization, X-Namespace',
        'Access-Control-Allow-Credentials': 'true',
        Vary: 'Origin',
      });
    }
    if (req.method === 'OPTIONS') {
      res.status(204).end();
      return;
    }
    next();
  };

  const adminOnly: RequestHandler = async (req, _res, next) => {
    const { id, secret } = bearerCredentials(req.header('authorization'));
    const principal = await verifyCredentials(deps, id, secret);
    if (!principal) return refuseAuthentication(deps, clientAddress(req));
    if (!isAdmin(principal)) throw new Forbidden('The codec server is for admin keys only');
    next();
  };

  // A wrong capability is a failed authentication like a wrong key (AUTH-6), and decodes nothing.
  const capability: RequestHandler = async (req, _res, next) => {
    if (!deps.keyring.verifyCodecCapability(String(req.params.capability)))
      return refuseAuthentication(deps, clientAddress(req));
    next();
  };

  router.use('/temporal-codec', cors);
  for (const op of ['encode', 'decode'] as const) {
    const paths: [string, RequestHandler][] = [
      [`/temporal-codec/${op}`, adminOnly],
      [`/temporal-codec/:capability/${op}`, capability],
    ];
    for (const [path, authorise] of paths)
      router.post(path, authorise, express.json({ limit: '4mb' }), async (req, res) => {
        const payloads = (req.body as { payloads?: unknown })?.payloads;
        if (!Array.isArray(payloads) || !payloads.every(isJsonPayload))
          throw new InvalidInput('Body must be {"payloads": [{"metadata": {...}, "data": "<base64>"}, ...]}');
        const input = payloads.map(fromJson);
        let output: Payload[];
        try {
          output = op === 'encode' ? await deps.codec.encode(input) : await deps.codec.decode(input);
        } catch (err) {
          // A payload that does not decrypt (tampered, or another application secret) is bad input.
          if (err instanceof DecryptionError)
            throw new InvalidInput(`Payload cannot be decoded: ${err.message}`);
          throw err;
        }
        res.json({ payloads: output.map(toJson) });
      });
  }
  return router;
}
