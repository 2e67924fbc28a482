// A WebSocket message of /v1/responses read as a create (SPEC OR-5): what passes, and the 400 of
// each refusal with the code and param a client dispatches on; the envelope's code is never null.
import { InvalidInput } from '../../domain/errors';
import { webSocketError } from '../../api/openai-errors';
import { createBodyOf } from '../../api/responses-socket-event';

const text = (value: unknown) => Buffer.from(typeof value === 'string' ? value : JSON.stringify(value));

/** The envelope a refused message gets, as the socket sends it. */
function refusal(data: Buffer, isBinary = false) {
  try {
    createBodyOf(data, isBinary);
  } catch (err) {
    expect(err).toBeInstanceOf(InvalidInput);
    return webSocketError(400, (err as InvalidInput).message, (err as InvalidInput).items);
  }
  throw new Error('the message was accepted');
}

describe('OR-5: a response.create message', () => {
  it('is the create body without its type', () => {
    const body = createBodyOf(
      text({ type: 'response.create', model: 'm', input: 'hi', store: false }),
      false,
    );
    expect(body).toEqual({ model: 'm', input: 'hi', store: false });
  });

  it('fragments of one text message are read as one', () => {
    const [a, b] = [text('{"type":"response.create",'), text('"model":"m"}')];
    expect(createBodyOf([a, b], false)).toEqual({ model: 'm' });
  });

  it.each([
    ['a binary message', text({ type: 'response.create', model: 'm' }), true, 'unsupported_message', null],
    ['an array', text([{ type: 'response.create' }]), false, 'invalid_json', null],
    ['no type', text({ model: 'm' }), false, 'missing_required_parameter', 'type'],
    [
      'stream: false (any value is refused)',
      text({ type: 'response.create', model: 'm', stream: false }),
      false,
      'unsupported_parameter',
      'stream',
    ],
    [
      'background: null',
      text({ type: 'response.create', model: 'm', background: null }),
      false,
      'unsupported_parameter',
      'background',
    ],
    [
      'a field the create has not',
      text({ type: 'response.create', model: 'm', extra: 1 }),
      false,
      'unknown_parameter',
      'extra',
    ],
  ])('%s: a 400 with its code', (_what, data, isBinary, code, param) => {
    expect(refusal(data, isBinary)).toMatchObject({ type: 'error', status: 400, error: { code, param } });
  });
});

describe('OR-5: the error envelope', () => {
  it.each([
    [400, 'invalid_request'],
    [500, 'server_error'],
    [502, 'upstream_error'],
    [401, 'invalid_api_key'],
  ])('status %i without a problem kind has code %s', (status, code) => {
    expect(webSocketError(status, 'words').error).toMatchObject({ code, message: 'words' });
  });
});
