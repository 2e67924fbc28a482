// /text_splitter_providers and /text_splitters (SPEC §3).
import { Router } from 'express';
import {
  TEXT_SPLITTER_FIELDS,
  type TextSplitter,
  type TextSplitterStore,
} from '../../db/text-splitter-store';
import { InvalidInput } from '../../domain/errors';
import type { Limits } from '../../domain/limits';
import { parseListQuery } from '../../domain/list-params';
import type { Principal } from '../../domain/permissions';
import { newId } from '../../infra/ids';
import { loadAuthorized, requireCreate } from '../access';
import { principalOf } from '../auth';
import type { RouteRegistry } from '../route-registry';
import { LIST_QUERY, listEnvelopeSchema } from '../schemas/common';
import { createTextSplitterSchema, type CreateTextSplitterBody } from '../schemas/knowledge';

const TEXT_SPLITTER_PROVIDERS = [
  {
    id: 'recursive_character',
    provider: 'recursive_character',
    description:
      'LangChain recursive splitting on ["\\n\\n", "\\n", " ", ""]. Parameters: chunk_size, chunk_overlap.',
  },
  {
    id: 'character',
    provider: 'character',
    description:
      'Splits on one separator (default "\\n\\n"). Parameters: chunk_size, chunk_overlap, separator.',
  },
];

const DEFAULT_CHUNK_SIZE = 1000;
const DEFAULT_CHUNK_OVERLAP = 200;

const presentTextSplitter = (s: TextSplitter) => ({
  id: s.id,
  name: s.name,
  description: s.description,
  provider: s.provider,
  parameters: s.parameters,
  created_at: s.created_at.toISOString(),
  updated_at: s.updated_at.toISOString(),
});

const splitterSchema = {
  type: 'object',
  properties: {
    id: { type: 'string' },
    name: { type: 'string' },
    description: { type: ['string', 'null'] },
    provider: { enum: ['recursive_character', 'character'] },
    parameters: { type: 'object' },
    created_at: { type: 'string' },
    updated_at: { type: 'string' },
  },
} as const;

export function textSplitterRoutes(
  routes: RouteRegistry,
  deps: { textSplitters: TextSplitterStore; limits: Pick<Limits, 'fragmentChars'> },
): Router {
  const router = Router();
  const load = (id: unknown, principal: Principal, action: 'read' | 'write') =>
    loadAuthorized(principal, action, 'text_splitters', 'Text splitter', id, (sid) =>
      deps.textSplitters.get(sid),
    );

  routes.add(
    router,
    {
      method: 'get',
      path: '/text_splitter_providers',
      summary: 'Built-in text splitter providers',
      tag: 'Text splitters',
      success: { status: 200, description: '{data: [{id, provider, description}]}' },
      errors: [401],
    },
    (_req, res) => {
      res.json({ data: TEXT_SPLITTER_PROVIDERS });
    },
  );

  routes.add<CreateTextSplitterBody>(
    router,
    {
      method: 'post',
      path: '/text_splitters',
      summary: 'Create a text splitter',
      tag: 'Text splitters',
      permission: 'write:text_splitters',
      body: createTextSplitterSchema(deps.limits),
      success: { status: 201, description: 'The splitter, defaults materialised', schema: splitterSchema },
      errors: [400, 401, 403, 409],
    },
    async (req, res) => {
      const principal = principalOf(req);
      requireCreate(principal, 'text_splitters', 'text splitter');
      const given = req.body.parameters ?? {};
      // A fragment limit configured below the default chunk size lowers the default.
      const chunkSize = given.chunk_size ?? Math.min(DEFAULT_CHUNK_SIZE, deps.limits.fragmentChars);
      const chunkOverlap = given.chunk_overlap ?? Math.min(DEFAULT_CHUNK_OVERLAP, chunkSize - 1);
      if (chunkOverlap > chunkSize - 1) {
        throw new InvalidInput(
          `parameters.chunk_overlap must be between 0 and chunk_size - 1 (${chunkSize - 1})`,
        );
      }
      if (given.separator !== undefined && req.body.provider !== 'character') {
        throw new InvalidInput('parameters.separator applies to the character splitter only');
      }
      const splitter = await deps.textSplitters.create({
        id: newId(),
        name: req.body.name,
        description: req.body.description ?? null,
        provider: req.body.provider,
        parameters: {
          chunk_size: chunkSize,
          chunk_overlap: chunkOverlap,
          ...(req.body.provider === 'character' ? { separator: given.separator ?? '\n\n' } : {}),
        },
        ownerKeyId: principal.keyId,
      });
      res.status(201).json(presentTextSplitter(splitter));
    },
  );

  routes.add(
    router,
    {
      method: 'get',
      path: '/text_splitters',
      summary: 'List text splitters the caller can read',
      tag: 'Text splitters',
      query: LIST_QUERY,
      success: { status: 200, description: 'List envelope', schema: listEnvelopeSchema(splitterSchema) },
      errors: [400, 401],
    },
    async (req, res) => {
      const page = await deps.textSplitters.list(
        principalOf(req),
        parseListQuery(req.query, TEXT_SPLITTER_FIELDS),
      );
      res.json({ ...page, data: page.data.map(presentTextSplitter) });
    },
  );

  routes.add(
    router,
    {
      method: 'get',
      path: '/text_splitters/:id',
      summary: 'Get a text splitter',
      tag: 'Text splitters',
      permission: 'read:text_splitters',
      success: { status: 200, description: 'The splitter', schema: splitterSchema },
      errors: [401, 404],
    },
    async (req, res) => {
      res.json(presentTextSplitter(await load(req.params.id, principalOf(req), 'read')));
    },
  );

  routes.add(
    router,
    {
      method: 'delete',
      path: '/text_splitters/:id',
      summary: 'Delete a text splitter (409 while in use)',
      tag: 'Text splitters',
      permission: 'write:text_splitters',
      success: { status: 204, description: 'Deleted' },
      errors: [401, 403, 404, 409],
    },
    async (req, res) => {
      const splitter = await load(req.params.id, principalOf(req), 'write');
      await deps.textSplitters.delete(splitter.id);
      res.status(204).end();
    },
  );
  return router;
}
