import test from 'ava';
import { createWeirClient, expectData } from './index.ts';

/** A fetch that records the request and answers `body` with `status`. */
function recordingFetch(status: number, body: unknown) {
  const requests: Request[] = [];
  const fetch = async (input: Request) => {
    requests.push(input);
    return new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });
  };
  return { requests, fetch };
}

test('the client sends the key as a bearer token to baseUrl + the typed path', async (t) => {
  const recorder = recordingFetch(200, { id: 'we_1' });
  const weir = createWeirClient({ baseUrl: 'http://127.0.0.1:9/', apiKey: 'sk_test_abc', fetch: recorder.fetch });
  await weir.GET('/api/v1/webhook-endpoints/{id}', { params: { path: { id: 'we_1' } } });
  const [request] = recorder.requests;
  t.is(request?.url, 'http://127.0.0.1:9/api/v1/webhook-endpoints/we_1');
  t.is(request?.headers.get('authorization'), 'Bearer sk_test_abc');
});

test('without a key no authorization header is sent', async (t) => {
  const recorder = recordingFetch(200, {});
  const weir = createWeirClient({ baseUrl: 'http://127.0.0.1:9', fetch: recorder.fetch });
  await weir.GET('/api/v1/openapi.json');
  t.is(recorder.requests[0]?.headers.get('authorization'), null);
});

test("expectData gives the 2xx body and throws with the status and Weir's error otherwise", async (t) => {
  const ok = createWeirClient({ baseUrl: 'http://x', fetch: recordingFetch(200, { data: [] }).fetch });
  t.deepEqual(expectData(await ok.GET('/api/v1/webhook-endpoints')), { data: [] } as never);
  const refused = createWeirClient({
    baseUrl: 'http://x',
    fetch: recordingFetch(401, { statusCode: 401, code: 'authentication_required' }).fetch,
  });
  const answer = await refused.GET('/api/v1/webhook-endpoints');
  t.throws(() => expectData(answer, 'list endpoints'), {
    message: 'list endpoints: 401 {"statusCode":401,"code":"authentication_required"}',
  });
});
