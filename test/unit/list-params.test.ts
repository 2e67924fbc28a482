// SPEC §1 list conventions: limit, order, filters, cursors and query_info.
import { InvalidInput } from '../../domain/errors';
import {
  DEFAULT_LIMIT,
  MAX_LIMIT,
  encodeCursor,
  parseListQuery,
  queryInfo,
  type ListFields,
} from '../../domain/list-params';

const FIELDS: ListFields = {
  id: 'uuid',
  name: 'string',
  description: 'string',
  size: 'number',
  enabled: 'boolean',
  created_at: 'timestamp',
};

const ID = '0190A1B2-0000-7000-8000-0000000000AA';
const ID2 = '0190a1b2-0000-7000-8000-0000000000bb';

/** The InvalidInput thrown by parsing `query`, for assertions on its message. */
function invalid(query: Record<string, unknown>): InvalidInput {
  try {
    parseListQuery(query, FIELDS);
  } catch (err) {
    expect(err).toBeInstanceOf(InvalidInput);
    return err as InvalidInput;
  }
  throw new Error(`expected InvalidInput for ${JSON.stringify(query)}`);
}

describe('defaults', () => {
  it('§1 lists: limit 20, ordered by created_at with id as tie-breaker, no filters', () => {
    const req = parseListQuery({}, FIELDS);
    expect(DEFAULT_LIMIT).toBe(20);
    expect(req).toEqual({
      limit: 20,
      order: [
        { field: 'created_at', desc: false },
        { field: 'id', desc: false },
      ],
      filters: [],
    });
    expect(req).not.toHaveProperty('after');
    expect(req).not.toHaveProperty('before');
  });
});

describe('limit', () => {
  it('§1 lists: accepts 1 and the maximum 100', () => {
    expect(parseListQuery({ limit: '1' }, FIELDS).limit).toBe(1);
    expect(parseListQuery({ limit: '100' }, FIELDS).limit).toBe(MAX_LIMIT);
    expect(MAX_LIMIT).toBe(100);
  });

  it.each(['0', '101', 'abc', '1.5', '-1', '', '1e2'])('§1 lists: limit=%p → InvalidInput', (limit) => {
    expect(invalid({ limit }).message).toMatch(/limit/);
  });

  it('§1 lists: a repeated limit is rejected', () => {
    expect(invalid({ limit: ['10', '20'] }).message).toMatch(/limit/);
  });
});

describe('order', () => {
  it('§1 lists: -field is descending and the id tie-breaker follows the last term', () => {
    expect(parseListQuery({ order: '-created_at' }, FIELDS).order).toEqual([
      { field: 'created_at', desc: true },
      { field: 'id', desc: true },
    ]);
  });

  it('§1 lists: several comma-separated fields keep their order', () => {
    expect(parseListQuery({ order: 'name,-size' }, FIELDS).order).toEqual([
      { field: 'name', desc: false },
      { field: 'size', desc: true },
      { field: 'id', desc: true },
    ]);
  });

  it('§1 lists: ordering by id adds no second id', () => {
    expect(parseListQuery({ order: '-id' }, FIELDS).order).toEqual([{ field: 'id', desc: true }]);
  });

  it('§1 lists: an unknown order field is rejected, naming it', () => {
    expect(invalid({ order: 'colour' }).message).toContain('colour');
    expect(invalid({ order: '-colour' }).message).toContain('colour');
  });

  it('§1 lists: a field given twice is rejected', () => {
    expect(invalid({ order: 'name,-name' }).message).toContain('name');
  });

  it('§1 lists: a repeated order parameter is rejected', () => {
    expect(invalid({ order: ['name', 'size'] }).message).toMatch(/order/);
  });
});

describe('filters', () => {
  it('§1 lists: equality on a string field', () => {
    expect(parseListQuery({ name: 'alpha' }, FIELDS).filters).toEqual([
      { field: 'name', op: 'eq', value: 'alpha' },
    ]);
  });

  it('§1 lists: every documented operator is accepted on a field of the right type', () => {
    const req = parseListQuery(
      {
        name$contains: 'lp',
        description$startswith: 'al',
        size$ne: '3',
        size$gt: '1',
        size$gte: '2',
        size$lt: '9',
        size$lte: '8.5',
      },
      FIELDS,
    );
    expect(req.filters).toEqual([
      { field: 'name', op: 'contains', value: 'lp' },
      { field: 'description', op: 'startswith', value: 'al' },
      { field: 'size', op: 'ne', value: 3 },
      { field: 'size', op: 'gt', value: 1 },
      { field: 'size', op: 'gte', value: 2 },
      { field: 'size', op: 'lt', value: 9 },
      { field: 'size', op: 'lte', value: 8.5 },
    ]);
  });

  it('§1 lists: an unknown field is rejected, naming it', () => {
    expect(invalid({ colour: 'red' }).message).toContain('colour');
    expect(invalid({ colour$ne: 'red' }).message).toContain('colour');
  });

  it('§1 lists: names inherited from Object.prototype are unknown fields, not crashes', () => {
    expect(invalid({ constructor: 'x' }).message).toContain('constructor');
    expect(invalid({ toString$ne: 'x' }).message).toContain('toString');
    expect(invalid({ order: 'hasOwnProperty' }).message).toContain('hasOwnProperty');
  });

  it('§1 lists: an unknown operator is rejected, naming it', () => {
    expect(invalid({ name$like: 'a' }).message).toContain('$like');
    expect(invalid({ name$eq: 'a' }).message).toContain('$eq');
    expect(invalid({ name$: 'a' }).message).toMatch(/operator/);
  });

  it('§1 lists: $contains and $startswith apply to text fields only', () => {
    expect(invalid({ size$contains: '1' }).message).toContain('size');
    expect(invalid({ enabled$startswith: 't' }).message).toContain('enabled');
    expect(invalid({ created_at$contains: '2024' }).message).toContain('created_at');
  });

  it('§1 lists: ordered comparisons do not apply to booleans', () => {
    expect(invalid({ enabled$gt: 'true' }).message).toContain('enabled');
  });

  it('§1 lists: $in splits on commas and types every value', () => {
    expect(parseListQuery({ size$in: '1,2,3' }, FIELDS).filters).toEqual([
      { field: 'size', op: 'in', value: [1, 2, 3] },
    ]);
    expect(parseListQuery({ name$in: 'a,b' }, FIELDS).filters).toEqual([
      { field: 'name', op: 'in', value: ['a', 'b'] },
    ]);
    expect(parseListQuery({ id$in: `${ID},${ID2}` }, FIELDS).filters).toEqual([
      { field: 'id', op: 'in', value: [ID.toLowerCase(), ID2] },
    ]);
    expect(invalid({ size$in: '1,x' }).message).toContain('"x"');
  });

  it('§1 lists: numbers must be finite numbers', () => {
    expect(invalid({ size: 'ten' }).message).toContain('size');
    expect(invalid({ size: '' }).message).toContain('size');
    expect(invalid({ size: 'Infinity' }).message).toContain('size');
    expect(parseListQuery({ size: '-2.5' }, FIELDS).filters[0]!.value).toBe(-2.5);
  });

  it('§1 lists: booleans are exactly true or false', () => {
    expect(parseListQuery({ enabled: 'true' }, FIELDS).filters[0]!.value).toBe(true);
    expect(parseListQuery({ enabled: 'false' }, FIELDS).filters[0]!.value).toBe(false);
    expect(invalid({ enabled: 'yes' }).message).toContain('enabled');
    expect(invalid({ enabled: '1' }).message).toContain('enabled');
  });

  it('§1 lists: timestamps are ISO 8601 and normalised to UTC', () => {
    expect(parseListQuery({ created_at$gt: '2024-03-01T10:00:00+02:00' }, FIELDS).filters[0]!.value).toBe(
      '2024-03-01T08:00:00.000Z',
    );
    expect(parseListQuery({ created_at$gt: '2024-03-01' }, FIELDS).filters[0]!.value).toBe(
      '2024-03-01T00:00:00.000Z',
    );
    expect(parseListQuery({ created_at$lt: '2024-03-01T10:00:00.123Z' }, FIELDS).filters[0]!.value).toBe(
      '2024-03-01T10:00:00.123Z',
    );
    expect(invalid({ created_at: 'yesterday' }).message).toContain('created_at');
  });

  it('§1 lists: timestamps without a zone are UTC, whatever the server time zone', () => {
    expect(parseListQuery({ created_at$gt: '2024-03-01T10:00:00' }, FIELDS).filters[0]!.value).toBe(
      '2024-03-01T10:00:00.000Z',
    );
  });

  it.each(['1', 'foo 12', 'March 7, 2024', 'Tue, 01 Jan 2024 00:00:00 GMT'])(
    '§1 lists: the non-ISO timestamp %p is rejected',
    (raw) => {
      expect(invalid({ created_at$gt: raw }).message).toContain('ISO 8601');
    },
  );

  it('§1 lists: ids must be UUIDs and are lower-cased', () => {
    expect(parseListQuery({ id: ID }, FIELDS).filters[0]!.value).toBe(ID.toLowerCase());
    expect(invalid({ id: 'not-a-uuid' }).message).toContain('not-a-uuid');
  });

  it('§1 lists: a repeated filter parameter is rejected, naming it', () => {
    expect(invalid({ name: ['a', 'b'] }).message).toContain('name');
    expect(invalid({ size$gt: ['1', '2'] }).message).toContain('size$gt');
  });
});

describe('cursors', () => {
  it('§1 lists: a cursor made for the page round-trips as after', () => {
    const order = parseListQuery({ order: '-name' }, FIELDS).order;
    const values = ['alpha', ID2];
    const req = parseListQuery({ order: '-name', after: encodeCursor(order, values) }, FIELDS);
    expect(req.after).toEqual(values);
    expect(req).not.toHaveProperty('before');
  });

  it('§1 lists: a cursor round-trips as before, with every value type', () => {
    const query = { order: 'enabled,size,created_at' };
    const order = parseListQuery(query, FIELDS).order;
    const values = [true, 3.5, '2024-03-01T10:00:00.000Z', ID2];
    expect(parseListQuery({ ...query, before: encodeCursor(order, values) }, FIELDS).before).toEqual(values);
  });

  it('§1 lists: a cursor from another order is rejected', () => {
    const byName = parseListQuery({ order: 'name' }, FIELDS).order;
    const cursor = encodeCursor(byName, ['alpha', ID2]);
    expect(invalid({ order: '-name', after: cursor }).message).toMatch(/after cursor/);
    expect(invalid({ after: cursor }).message).toMatch(/after cursor/);
  });

  it.each([
    'garbage!!',
    'bm90IGpzb24', // "not json"
    Buffer.from('null').toString('base64url'),
    Buffer.from('{"o":"created_at,id","v":[1]}').toString('base64url'),
    Buffer.from('{"o":"created_at,id","v":[{},"x"]}').toString('base64url'),
  ])('§1 lists: the garbage cursor %p is rejected', (cursor) => {
    expect(invalid({ before: cursor }).message).toMatch(/before cursor/);
  });

  it('§1 lists: a cursor whose values do not fit the field types is rejected', () => {
    const order = parseListQuery({}, FIELDS).order;
    expect(invalid({ after: encodeCursor(order, [true, ID2]) }).message).toMatch(/after cursor/);
    expect(invalid({ after: encodeCursor(order, ['not a time', ID2]) }).message).toMatch(/after cursor/);
    expect(invalid({ after: encodeCursor(order, ['2024-03-01T10:00:00.000Z', 'x']) }).message).toMatch(
      /after cursor/,
    );
    const bySize = parseListQuery({ order: 'size' }, FIELDS).order;
    expect(invalid({ order: 'size', after: encodeCursor(bySize, ['3', ID2]) }).message).toMatch(
      /after cursor/,
    );
  });

  it('§1 lists: after and before together are rejected', () => {
    const order = parseListQuery({}, FIELDS).order;
    const cursor = encodeCursor(order, ['2024-03-01T10:00:00.000Z', ID2]);
    expect(invalid({ after: cursor, before: cursor }).message).toMatch(/after or before/);
  });
});

describe('queryInfo', () => {
  it('§1 lists: echoes the filters, then the order', () => {
    const req = parseListQuery({ name$startswith: 'al', size$in: '1,2', order: '-created_at' }, FIELDS);
    expect(queryInfo(req)).toEqual([
      { field: 'name', op: 'startswith', value: 'al' },
      { field: 'size', op: 'in', value: [1, 2] },
      { order: '-created_at' },
    ]);
  });

  it('§1 lists: the default order is echoed as created_at', () => {
    expect(queryInfo(parseListQuery({}, FIELDS))).toEqual([{ order: 'created_at' }]);
  });

  it('§1 lists: an explicit id order is echoed', () => {
    expect(queryInfo(parseListQuery({ order: '-id' }, FIELDS))).toEqual([{ order: '-id' }]);
    expect(queryInfo(parseListQuery({ order: 'name,-size' }, FIELDS))).toEqual([{ order: 'name,-size' }]);
  });
});
