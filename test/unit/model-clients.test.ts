import { ModelClients } from '../../infra/model-clients';

it('one OpenAI client per endpoint and key, kept between calls; another endpoint or key gets its own', () => {
  const clients = new ModelClients();
  const first = clients.get('http://127.0.0.1:1/v1', 'sk-a');
  expect(clients.get('http://127.0.0.1:1/v1', 'sk-a')).toBe(first);
  expect(clients.get('http://127.0.0.1:1/v1', 'sk-b')).not.toBe(first);
  expect(clients.get('http://127.0.0.1:2/v1', 'sk-a')).not.toBe(first);
  expect(first.baseURL).toBe('http://127.0.0.1:1/v1');
  expect(first.maxRetries).toBe(0);
});
