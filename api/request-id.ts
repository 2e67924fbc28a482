// x-request-id (SPEC §1): an inbound value of 1–128 visible ASCII characters is reused, otherwise
// a UUID is generated; every response carries it and every log line of the request names it.
import type { RequestHandler } from 'express';
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { annotateRequest } from '../infra/telemetry';
import { workflowIdFor } from '../workflows/contracts';

const VISIBLE_ASCII = /^[\x21-\x7e]{1,128}$/;

export function requestContext(logger: Logger): RequestHandler {
  return (req, res, next) => {
    const inbound = req.header('x-request-id');
    req.requestId = inbound && VISIBLE_ASCII.test(inbound) ? inbound : randomUUID();
    res.set('x-request-id', req.requestId);
    annotateRequest(req.requestId);
    req.log = logger.child({ requestId: req.requestId });
    const started = process.hrtime.bigint();
    // Nothing is built for a line the level drops.
    if (!logger.isLevelEnabled('info')) return next();
    res.on('close', () => {
      const route = req.route?.path ? `${req.baseUrl}${req.route.path as string}` : undefined;
      // A request that started or read an execution names it (SPEC §16), and its workflow.
      const executionId = res.getHeader('x-agentry-execution-id');
      req.log.info(
        {
          method: req.method,
          route,
          status: res.statusCode,
          ms: Number(process.hrtime.bigint() - started) / 1e6,
          ...(typeof executionId === 'string' ? { executionId, workflowId: workflowIdFor(executionId) } : {}),
        },
        'request',
      );
    });
    next();
  };
}
