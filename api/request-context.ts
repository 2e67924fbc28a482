// What the HTTP edge attaches to each request: its id, its logger and, after authentication,
// the calling key.
import type { Logger } from 'pino';
import type { Principal } from '../domain/permissions';

declare module 'express-serve-static-core' {
  interface Request {
    requestId: string;
    log: Logger;
    principal?: Principal;
  }
}

export {};
