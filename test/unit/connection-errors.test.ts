// What kind of failure a connection to PostgreSQL or Redis met (infra/connection-errors.ts): the
// errors node-postgres and Node really raise, told apart from those a retry cannot mend.
import { DatabaseError } from 'pg';
import { isDependencyFailure } from '../../api/error-handler';
import { connectionProblem, isDatabaseConnectionLost } from '../../infra/connection-errors';

/** A server error as node-postgres builds it from an ErrorResponse message. */
function serverError(code: string, message: string): DatabaseError {
  const err = new DatabaseError(message, message.length, 'error');
  err.code = code;
  return err;
}

const nodeError = (code: string): NodeJS.ErrnoException => Object.assign(new Error(code), { code });

describe('connectionProblem', () => {
  it('names a refused certificate, refused credentials and an unreachable service', () => {
    expect(connectionProblem(nodeError('SELF_SIGNED_CERT_IN_CHAIN'))).toBe('certificate');
    expect(connectionProblem(serverError('28P01', 'password authentication failed'))).toBe('credentials');
    expect(connectionProblem(new Error('WRONGPASS invalid username-password pair'))).toBe('credentials');
    expect(connectionProblem(nodeError('ECONNREFUSED'))).toBe('unreachable');
    expect(connectionProblem(serverError('23505', 'duplicate key value'))).toBeUndefined();
  });
});

describe('isDatabaseConnectionLost', () => {
  it.each([
    [
      'a backend terminated by pg_terminate_backend (57P01)',
      serverError('57P01', 'terminating connection due to administrator command'),
    ],
    [
      'the server shutting down (57P02) or starting (57P03)',
      serverError('57P03', 'the database system is starting up'),
    ],
    ['a connection exception (class 08)', serverError('08006', 'connection failure')],
    ['a socket closed under the client', new Error('Connection terminated unexpectedly')],
    [
      'the same through knex, which puts the statement first',
      new Error(`insert into "execution_payloads" ("id") values ('x') - Connection terminated unexpectedly`),
    ],
    [
      'a client of the pool that broke before the query',
      new Error('select 1 - Client has encountered a connection error and is not queryable'),
    ],
    [
      "knex's pool that could not hand out a connection in time",
      Object.assign(new Error('Knex: Timeout acquiring a connection. The pool is probably full.'), {
        name: 'KnexTimeoutError',
      }),
    ],
    ['a refused or reset TCP connection', nodeError('ECONNRESET')],
  ])('%s: lost, a new connection may succeed', (_what, err) => {
    expect(isDatabaseConnectionLost(err)).toBe(true);
  });

  it.each([
    ['a unique violation (23505)', serverError('23505', 'duplicate key value violates unique constraint')],
    ['a syntax error (42601)', serverError('42601', 'syntax error at or near "x"')],
    ['refused credentials (28P01)', serverError('28P01', 'password authentication failed')],
    ['a plain error', new Error('boom')],
    [
      'a statement that merely mentions the words',
      new Error("select 'Connection terminated' - syntax error"),
    ],
    ['not an error at all', undefined],
  ])('%s: not a lost connection, repeating it would fail again', (_what, err) => {
    expect(isDatabaseConnectionLost(err)).toBe(false);
  });
});

describe('isDependencyFailure (SPEC §1: a dependency that failed is a 503, never a 500)', () => {
  it('counts a database connection lost under knex as a dependency failure', () => {
    expect(
      isDependencyFailure(
        new Error('insert into "executions" ("id") values ($1) - Connection terminated unexpectedly'),
      ),
    ).toBe(true);
    expect(
      isDependencyFailure(serverError('57P01', 'terminating connection due to administrator command')),
    ).toBe(true);
    expect(isDependencyFailure(serverError('23505', 'duplicate key value'))).toBe(false);
  });
});
