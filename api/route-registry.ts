// Routes are declared once: the declaration mounts the handler (with body validation) and
// describes the operation for /openapi.json, so the document cannot drift from the code.
import type { Request, Response, Router } from 'express';
import { validate } from './validation';

type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';

export interface RouteSpec {
  method: Method;
  /** Express path, e.g. `/llms/:id`. */
  path: string;
  summary: string;
  tag: string;
  /** Authentication required (default true). */
  auth?: boolean;
  /** Permission needed, for the documentation (`execute:llms`). */
  permission?: string;
  body?: object;
  /**
   * Validate the body inside the handler instead of before it, where SPEC fixes an order of
   * checks that puts others first (§9.2). The schema still documents the operation.
   */
  deferBodyValidation?: boolean;
  /** Success status and, optionally, the JSON Schema of its body. */
  success: { status: number; description: string; schema?: object; contentTypes?: string[] };
  errors?: number[];
  query?: { name: string; description: string }[];
  /** Optional request headers worth documenting (e.g. `Idempotency-Key`). */
  headers?: { name: string; description: string }[];
  /** The error body's schema where a route family has its own shape (default: SPEC §1's). */
  errorBody?: object;
  /** Also authenticated by `Authorization: Bearer <key id>.<secret>` (the OpenAI-compatible routes). */
  bearer?: boolean;
}

type Handler<B> = (req: Request & { body: B }, res: Response) => Promise<void> | void;

export class RouteRegistry {
  readonly specs: RouteSpec[] = [];

  add<B = undefined>(router: Router, spec: RouteSpec, handler: Handler<B>): void {
    this.specs.push(spec);
    router[spec.method](spec.path, async (req: Request, res: Response) => {
      if (spec.body && !spec.deferBodyValidation) req.body = validate<B>(spec.body, req.body);
      await handler(req as Request & { body: B }, res);
    });
  }
}
