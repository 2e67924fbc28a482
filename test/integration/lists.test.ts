// SPEC §1 list envelope on /llms and /api_keys: keyset paging both ways, order, filters,
// query_info, parameter validation, and visibility by permission.
import type { Api } from '../helpers/http';
import { startStack, type Stack } from '../helpers/stack';

let stack: Stack;

// Names deliberately not in creation order; models repeat so that ordering by model needs the
// tie-breakers.
const LLMS = [
  { name: 'delta', model: 'm-x' },
  { name: 'alpha', model: 'm-y' },
  { name: 'golf', model: 'm-x' },
  { name: 'charlie', model: 'm-z' },
  { name: 'echo', model: 'm-y' },
  { name: 'bravo', model: 'm-x' },
  { name: 'foxtrot', model: 'm-z' },
];
let llms: any[] = [];
const ids = (items: any[]): string[] => items.map((i) => i.id);
const cmp = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);
const byName = (name: string): any => llms.find((l) => l.name === name);

beforeAll(async () => {
  stack = await startStack({ worker: false });
  for (const l of LLMS) {
    const res = await stack.api.post('/llms', {
      ...l,
      endpoint: 'http://127.0.0.1:9/v1',
      api_key: 'sk-list',
    });
    expect(res.status).toBe(201);
    llms.push(res.body);
  }
  llms = (await stack.api.get('/llms?limit=100')).body.data;
});

afterAll(async () => {
  await stack?.stop();
});

interface Page {
  data: any[];
  page_info: {
    after: string | null;
    before: string | null;
    count: number;
    has_next: boolean;
    has_prev: boolean;
  };
  query_info: any[];
}

async function list(path: string, api: Api = stack.api): Promise<Page> {
  const res = await api.get(path);
  expect({ path, status: res.status, detail: res.body?.detail }).toEqual({
    path,
    status: 200,
    detail: undefined,
  });
  expect(Object.keys(res.body).sort()).toEqual(['data', 'page_info', 'query_info']);
  expect(Object.keys(res.body.page_info).sort()).toEqual([
    'after',
    'before',
    'count',
    'has_next',
    'has_prev',
  ]);
  expect(res.body.page_info.count).toBe(res.body.data.length);
  if (res.body.data.length === 0) {
    expect(res.body.page_info.after).toBeNull();
    expect(res.body.page_info.before).toBeNull();
  } else {
    expect(res.body.page_info.after).toEqual(expect.any(String));
    expect(res.body.page_info.before).toEqual(expect.any(String));
  }
  return res.body as Page;
}

const join = (base: string, query: string): string => `${base}${base.includes('?') ? '&' : '?'}${query}`;

/** Every page forwards from the start, then every page backwards from the last one. */
async function walk(base: string, limit: number): Promise<{ forward: Page[]; backward: Page[] }> {
  const forward: Page[] = [await list(join(base, `limit=${limit}`))];
  while (forward[forward.length - 1]!.page_info.has_next) {
    const cursor = forward[forward.length - 1]!.page_info.after!;
    forward.push(await list(join(base, `limit=${limit}&after=${encodeURIComponent(cursor)}`)));
    expect(forward.length).toBeLessThan(50);
  }
  const backward: Page[] = [forward[forward.length - 1]!];
  while (backward[0]!.page_info.has_prev) {
    const cursor = backward[0]!.page_info.before!;
    backward.unshift(await list(join(base, `limit=${limit}&before=${encodeURIComponent(cursor)}`)));
    expect(backward.length).toBeLessThan(50);
  }
  return { forward, backward };
}

/** Both walks yield exactly `expected`, in order, with consistent page flags. */
async function expectPaging(base: string, limit: number, expected: string[]): Promise<void> {
  const { forward, backward } = await walk(base, limit);
  for (const pages of [forward, backward]) {
    expect(pages.flatMap((p) => ids(p.data))).toEqual(expected);
    expect(pages[0]!.page_info.has_prev).toBe(false);
    expect(pages[pages.length - 1]!.page_info.has_next).toBe(false);
    pages.forEach((p, i) => {
      expect(p.data.length).toBeGreaterThan(0);
      if (i > 0) expect(p.page_info.has_prev).toBe(true);
      if (i < pages.length - 1) expect(p.page_info.has_next).toBe(true);
    });
  }
  // Pages are full except the last (the walk back starts from it).
  expect(forward.slice(0, -1).every((p) => p.page_info.count === limit)).toBe(true);
  expect(backward.slice(0, -1).every((p) => p.page_info.count === limit)).toBe(true);
  expect(forward).toHaveLength(Math.ceil(expected.length / limit));

  // `after` of a page is the cursor of its last item: paging after it starts with the next item,
  // and paging before `before` ends with the item preceding the first.
  const first = forward[0]!;
  const next = await list(join(base, `limit=1&after=${encodeURIComponent(first.page_info.after!)}`));
  expect(ids(next.data)).toEqual([expected[limit]]);
  const second = forward[1]!;
  const prev = await list(join(base, `limit=1&before=${encodeURIComponent(second.page_info.before!)}`));
  expect(ids(prev.data)).toEqual([expected[limit - 1]]);
  expect(prev.page_info).toMatchObject({ has_prev: limit > 1, has_next: true });

  // Past either end: an empty page with null cursors, pointing back at the items.
  const last = forward[forward.length - 1]!;
  const beyond = await list(join(base, `limit=${limit}&after=${encodeURIComponent(last.page_info.after!)}`));
  expect(beyond.data).toEqual([]);
  expect(beyond.page_info).toEqual({ after: null, before: null, count: 0, has_next: false, has_prev: true });
  const before = await list(
    join(base, `limit=${limit}&before=${encodeURIComponent(first.page_info.before!)}`),
  );
  expect(before.page_info).toEqual({ after: null, before: null, count: 0, has_next: true, has_prev: false });
}

describe('§1 list envelope: paging', () => {
  it('§1: /llms pages forward with after and backward with before; the pages are the full list in order', async () => {
    expect(llms.map((l) => l.name)).toEqual(LLMS.map((l) => l.name));
    const full = await list('/llms');
    expect(full.page_info).toMatchObject({ count: 7, has_next: false, has_prev: false });
    await expectPaging('/llms', 3, ids(llms));
    await expectPaging('/llms', 1, ids(llms));
    await expectPaging('/llms', 6, ids(llms));
  });

  it('§1: limit defaults to 20 and caps at 100', async () => {
    for (let i = 0; i < 21; i++) {
      const res = await stack.api.post('/api_keys', { name: `bulk-${String(i).padStart(2, '0')}` });
      expect(res.status).toBe(201);
    }
    const page = await list('/api_keys');
    expect(page.page_info).toMatchObject({ count: 20, has_next: true, has_prev: false });
    const total = await stack.rt.db('api_keys').count({ n: '*' });
    expect((await list('/api_keys?limit=100')).page_info.count).toBe(Number(total[0]!.n));
    const small = await list('/api_keys?limit=5&name$startswith=bulk-');
    expect(small.page_info).toMatchObject({ count: 5, has_next: true, has_prev: false });
  });

  it('§1: order=-created_at reverses, order=name sorts by name, paging follows the order', async () => {
    const reversed = ids([...llms].reverse());
    expect(ids((await list('/llms?order=-created_at')).data)).toEqual(reversed);
    await expectPaging('/llms?order=-created_at', 3, reversed);

    const sorted = [...llms].sort((a, b) => cmp(a.name, b.name));
    expect((await list('/llms?order=name')).data.map((l) => l.name)).toEqual(sorted.map((l) => l.name));
    await expectPaging('/llms?order=name', 2, ids(sorted));
    await expectPaging('/llms?order=-name', 3, ids([...sorted].reverse()));
  });

  it('§1: ordering by a repeated field pages through ties without duplicates or gaps', async () => {
    const expected = [...llms].sort((a, b) => cmp(a.model, b.model) || cmp(b.name, a.name));
    expect(ids((await list('/llms?order=model,-name')).data)).toEqual(ids(expected));
    await expectPaging('/llms?order=model,-name', 2, ids(expected));

    // model alone: ties fall back to id (creation order for UUIDv7).
    const byModel = [...llms].sort((a, b) => cmp(a.model, b.model) || cmp(a.id, b.id));
    await expectPaging('/llms?order=model', 2, ids(byModel));
    const byModelDesc = [...llms].sort((a, b) => cmp(b.model, a.model) || cmp(b.id, a.id));
    await expectPaging('/llms?order=-model', 3, ids(byModelDesc));
  });

  it('§1: /api_keys uses the same envelope and paging', async () => {
    for (const name of ['keys-c', 'keys-a', 'keys-d', 'keys-b']) {
      const res = await stack.api.post('/api_keys', { name, permissions: ['read:llms'] });
      expect(res.status).toBe(201);
    }
    const all = (await list('/api_keys?limit=100')).data;
    expect(all.length).toBeGreaterThanOrEqual(5);
    expect(all.some((k) => k.id === stack.env.adminKeyId)).toBe(true);
    await expectPaging('/api_keys', 2, ids(all));
    await expectPaging('/api_keys?order=-created_at', 4, ids([...all].reverse()));
    const keys = await list('/api_keys?name$startswith=keys-&order=-name');
    expect(keys.data.map((k) => k.name)).toEqual(['keys-d', 'keys-c', 'keys-b', 'keys-a']);
    expect(keys.query_info).toEqual([
      { field: 'name', op: 'startswith', value: 'keys-' },
      { order: '-name' },
    ]);
    await expectPaging('/api_keys?name$startswith=keys-&order=name', 3, ids([...keys.data].reverse()));
  });
});

describe('§1 list envelope: filters and query_info', () => {
  const names = async (query: string): Promise<string[]> =>
    (await list(`/llms?${query}`)).data.map((l) => l.name);
  const expectedNames = (pred: (l: any) => boolean): string[] => llms.filter(pred).map((l) => l.name);

  it('§1: equality, $contains, $startswith, $ne and $in filter by name', async () => {
    expect(await names('name=alpha')).toEqual(['alpha']);
    expect(await names('name=alp')).toEqual([]);
    expect(await names('name$contains=ha')).toEqual(expectedNames((l) => l.name.includes('ha')));
    expect(expectedNames((l) => l.name.includes('ha'))).toEqual(['alpha', 'charlie']);
    expect(await names('name$startswith=e')).toEqual(['echo']);
    expect(await names('name$startswith=ha')).toEqual([]);
    expect(await names('name$ne=alpha')).toEqual(expectedNames((l) => l.name !== 'alpha'));
    expect(await names('name$in=alpha,bravo')).toEqual(['alpha', 'bravo']);
    expect(await names('name$in=zulu')).toEqual([]);
    expect(await names('name$contains=%25')).toEqual([]); // a literal %, not a LIKE wildcard
    expect(await names('name$startswith=_')).toEqual([]);
  });

  it('§1: $gt/$gte/$lt/$lte on timestamps and $in on model; filters combine', async () => {
    const pivot = llms[3].created_at as string;
    expect(await names(`created_at$gt=${pivot}`)).toEqual(expectedNames((l) => l.created_at > pivot));
    expect(await names(`created_at$gte=${pivot}`)).toEqual(expectedNames((l) => l.created_at >= pivot));
    expect(await names(`created_at$lt=${pivot}`)).toEqual(expectedNames((l) => l.created_at < pivot));
    expect(await names(`created_at$lte=${pivot}`)).toEqual(expectedNames((l) => l.created_at <= pivot));
    expect(await names(`created_at$gte=${pivot}`)).toContain('charlie');
    expect(await names(`created_at$lt=${pivot}`)).not.toContain('charlie');
    expect(await names('created_at$gt=2000-01-01T00:00:00Z')).toHaveLength(7);
    expect(await names('created_at$lt=2000-01-01T00:00:00Z')).toEqual([]);

    expect(await names('model$in=m-x,m-y')).toEqual(expectedNames((l) => l.model !== 'm-z'));
    expect(await names('model=m-x&name$ne=golf')).toEqual(['delta', 'bravo']);
    expect(await names('provider=custom')).toHaveLength(7);
    expect(await names('provider=openai')).toEqual([]);
    expect(await names(`id=${byName('echo').id}`)).toEqual(['echo']);
    expect(await names(`id$in=${byName('echo').id},${byName('golf').id}`)).toEqual(['golf', 'echo']);
  });

  it('§1: filtered lists page with cursors that keep the filter', async () => {
    const expected = ids(llms.filter((l) => l.model !== 'm-y'));
    await expectPaging('/llms?model$ne=m-y', 2, expected);
    await expectPaging(
      '/llms?model$in=m-x,m-z&order=-name',
      2,
      ids([...llms].filter((l) => l.model !== 'm-y').sort((a, b) => cmp(b.name, a.name))),
    );
  });

  it('§1: query_info echoes each applied filter and the order', async () => {
    const pivot = llms[2].created_at as string;
    const page = await list(
      `/llms?name$in=alpha,bravo&created_at$gt=${encodeURIComponent('2000-01-01T00:00:00Z')}&model$ne=m-z&order=-created_at`,
    );
    expect(page.query_info).toEqual([
      { field: 'name', op: 'in', value: ['alpha', 'bravo'] },
      { field: 'created_at', op: 'gt', value: '2000-01-01T00:00:00.000Z' },
      { field: 'model', op: 'ne', value: 'm-z' },
      { order: '-created_at' },
    ]);
    expect(page.data.map((l) => l.name)).toEqual(['bravo', 'alpha']);
    expect((await list('/llms')).query_info).toEqual([{ order: 'created_at' }]);
    expect((await list(`/llms?name=alpha&created_at$lte=${pivot}`)).query_info).toEqual([
      { field: 'name', op: 'eq', value: 'alpha' },
      { field: 'created_at', op: 'lte', value: pivot },
      { order: 'created_at' },
    ]);
    expect((await list('/llms?order=model,-name')).query_info).toEqual([{ order: 'model,-name' }]);
  });
});

describe('§1 list envelope: invalid parameters', () => {
  const forge = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString('base64url');

  it('§1: bad list parameters → 400 naming them, never 500', async () => {
    const page = await list('/llms?limit=2');
    const byName = await list('/llms?limit=2&order=name');
    const cases: [string, string[]][] = [
      ['/llms?colour=red', ['colour']],
      ['/llms?constructor=x', ['constructor']],
      ['/llms?order=toString', ['toString']],
      ['/llms?created_at$gt=foo%2012', ['created_at']],
      ['/llms?api_key=sk-list', ['api_key']],
      ['/llms?owner_key_id=x', ['owner_key_id']],
      ['/llms?name$foo=x', ['$foo']],
      ['/llms?name$=x', ['$']],
      ['/llms?name$eq=x', ['$eq']],
      ['/llms?limit=0', ['limit']],
      ['/llms?limit=101', ['limit']],
      ['/llms?limit=abc', ['limit']],
      ['/llms?limit=-1', ['limit']],
      ['/llms?limit=2.5', ['limit']],
      ['/llms?limit=', ['limit']],
      ['/llms?limit=1&limit=2', ['limit']],
      ['/llms?after=garbage', ['after']],
      ['/llms?before=%%%', ['before']],
      ['/llms?after=', ['after']],
      [`/llms?after=${forge({ o: 'created_at,id', v: ['yesterday', 'x'] })}`, ['after']],
      [`/llms?after=${forge({ o: 'created_at,id', v: [1, 2] })}`, ['after']],
      [`/llms?before=${forge({ o: 'name,id', v: ['a', 'not-a-uuid'] })}&order=name`, ['before']],
      [`/llms?after=${forge({ o: 'created_at,id', v: [null, null] })}`, ['after']],
      [`/llms?after=${forge([])}`, ['after']],
      [`/llms?after=${encodeURIComponent(page.page_info.after!)}&order=name`, ['after']],
      [`/llms?before=${encodeURIComponent(byName.page_info.before!)}`, ['before']],
      [
        `/llms?after=${encodeURIComponent(page.page_info.after!)}&before=${encodeURIComponent(page.page_info.before!)}`,
        ['after', 'before'],
      ],
      ['/llms?created_at$gt=yesterday', ['created_at']],
      ['/llms?created_at=2024-13-45T00:00:00Z', ['created_at']],
      ['/llms?id=not-a-uuid', ['id']],
      ['/llms?created_at$contains=2024', ['$contains', 'created_at']],
      ['/llms?order=colour', ['colour']],
      ['/llms?order=-', ['order']],
      ['/llms?order=name,name', ['name']],
      ['/llms?order=api_key', ['api_key']],
      ['/api_keys?secret_hmac=x', ['secret_hmac']],
      ['/api_keys?order=secret_hmac', ['secret_hmac']],
      ['/api_keys?permissions$foo=x', ['permissions']],
      ['/api_keys?limit=1000', ['limit']],
    ];
    for (const [path, named] of cases) {
      const res = await stack.api.get(path);
      expect({ path, status: res.status }).toEqual({ path, status: 400 });
      for (const n of named)
        expect({ path, detail: res.body.detail }).toEqual({ path, detail: expect.stringContaining(n) });
    }
  });

  it('§1: a cursor from /api_keys is not mistaken for an /llms position', async () => {
    // Same order, so it is accepted; it must simply position by its values.
    const keys = await list('/api_keys?limit=1&order=-created_at');
    const res = await stack.api.get(
      `/llms?after=${encodeURIComponent(keys.page_info.after!)}&order=-created_at`,
    );
    expect(res.status).toBe(200);
  });
});

describe('§1 list envelope: visibility', () => {
  it('§1: lists show only what the key can read', async () => {
    const echo = byName('echo').id as string;
    const one = await stack.api.post('/api_keys', { name: 'sees-one', permissions: [`read:llms:${echo}`] });
    const reader = stack.api.as(one.body);
    const page = await list('/llms', reader);
    expect(ids(page.data)).toEqual([echo]);
    expect(page.page_info).toMatchObject({ count: 1, has_next: false, has_prev: false });
    expect((await list('/llms?order=-name&limit=1', reader)).data.map((l) => l.name)).toEqual(['echo']);
    expect((await list('/llms?name=alpha', reader)).data).toEqual([]);
    expect((await list(`/llms?id$in=${echo},${byName('alpha').id}`, reader)).data.map((l) => l.name)).toEqual(
      ['echo'],
    );

    const nothing = await stack.api.post('/api_keys', { name: 'sees-nothing' });
    const empty = await list('/llms', stack.api.as(nothing.body));
    expect(empty.data).toEqual([]);
    expect(empty.page_info).toEqual({
      after: null,
      before: null,
      count: 0,
      has_next: false,
      has_prev: false,
    });

    const all = await stack.api.post('/api_keys', { name: 'sees-all', permissions: ['read:llms'] });
    expect(ids((await list('/llms', stack.api.as(all.body))).data)).toEqual(ids(llms));
  });

  it('§1: an API key list shows the keys it owns or may read, nothing else', async () => {
    const parent = await stack.api.post('/api_keys', { name: 'parent', permissions: ['write:api_keys'] });
    const as = stack.api.as(parent.body);
    const children: string[] = [];
    for (const name of ['child-1', 'child-2']) {
      const res = await as.post('/api_keys', { name });
      expect(res.status).toBe(201);
      children.push(res.body.id);
    }
    const page = await list('/api_keys', as);
    expect(ids(page.data)).toEqual(children);
    for (const k of page.data) expect(k).not.toHaveProperty('secret');

    const one = await stack.api.post('/api_keys', {
      name: 'reads-one-key',
      permissions: [`read:api_keys:${children[1]}`],
    });
    expect(ids((await list('/api_keys', stack.api.as(one.body))).data)).toEqual([children[1]]);
  });
});

describe('§1 ordering by a nullable field', () => {
  it('§1: order=description pages through items with and without a description, each exactly once', async () => {
    const names: string[] = [];
    for (const [i, description] of ['b', null, 'a', null, 'c'].entries()) {
      const res = await stack.api.post('/llms', {
        name: `nullable-${i}`,
        description,
        endpoint: 'http://127.0.0.1:9/v1',
        model: 'm',
        api_key: 'k',
      });
      expect(res.status).toBe(201);
      names.push(res.body.name);
    }
    const seen: string[] = [];
    let after: string | null = null;
    do {
      const query: string = `/llms?name$startswith=nullable-&order=description&limit=2${after ? `&after=${after}` : ''}`;
      const res = await stack.api.get(query);
      expect(res.status).toBe(200);
      seen.push(...res.body.data.map((l: { name: string }) => l.name));
      after = res.body.page_info.has_next ? res.body.page_info.after : null;
    } while (after);
    expect([...seen].sort()).toEqual([...names].sort());
    expect(seen.slice(2)).toEqual(['nullable-2', 'nullable-0', 'nullable-4']);
  });
});
