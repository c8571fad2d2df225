import { declarationOf } from './route.ts';
import { type MountedAreas, mountedRoutes } from './openapi-document.ts';

/**
 * The route table `openApiDocument` documents, as text: each layer's area, path, methods and
 * whether it is declared, with the document's info. A route's schemas come from code alone
 * (configuration decides which routers are mounted, not what a route declares), so within one
 * process one key names one document.
 */
export function routeTableKey(areas: MountedAreas, info: { version: string; serverUrl?: string }): string {
  const lines = [JSON.stringify(info)];
  for (const { area, layer } of mountedRoutes(areas))
    lines.push(JSON.stringify([area, layer.path, layer.methods, declarationOf(layer) !== undefined]));
  return lines.join('\n');
}
