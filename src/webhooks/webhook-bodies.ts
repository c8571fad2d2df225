/**
 * The bodies of public events, rendered once per event and name it is sent under (the key) however
 * many endpoints receive it: a render is shared while under way, so deliveries of one event to five
 * endpoints due at once read the log once. The newest `limit` bodies are kept; a render that fails is forgotten, so the next try renders again.
 */
export function createWebhookBodies(limit = 1000) {
  const bodies = new Map<string, Promise<string>>();
  return {
    bodyOf(key: string, render: () => Promise<string>): Promise<string> {
      let body = bodies.get(key);
      if (body === undefined) {
        const rendering = render();
        body = rendering;
        if (bodies.size >= limit) bodies.delete(bodies.keys().next().value!);
        bodies.set(key, rendering);
        rendering.catch(() => {
          if (bodies.get(key) === rendering) bodies.delete(key);
        });
      }
      return body;
    },
  };
}
