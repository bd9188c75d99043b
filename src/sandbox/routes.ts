// The route table of the emulator: which method and path is which endpoint, by its template name
// (`/v1/generations/:id`). Counters, logs and fault filters all speak in these templates, so a test
// writes "GET /v1/generations/:id" rather than a regular expression.

export const API_ROUTES = [
  "POST /v1/generations",
  "GET /v1/generations/:id",
  "POST /v1/audios",
  "POST /v1/assets",
  "GET /v1/assets/:id",
  "DELETE /v1/assets/:id",
] as const;
export type ApiRoute = (typeof API_ROUTES)[number];

export const FILE_ROUTE = "GET /files/:token";

const TEMPLATES: readonly { readonly template: string; readonly pattern: RegExp }[] = [
  { template: "/v1/generations", pattern: /^\/v1\/generations\/?$/ },
  { template: "/v1/generations/:id", pattern: /^\/v1\/generations\/([^/]+)\/?$/ },
  { template: "/v1/audios", pattern: /^\/v1\/audios\/?$/ },
  { template: "/v1/assets", pattern: /^\/v1\/assets\/?$/ },
  { template: "/v1/assets/:id", pattern: /^\/v1\/assets\/([^/]+)\/?$/ },
  { template: "/files/:token", pattern: /^\/files\/([^/]+)$/ },
];

export type RouteMatch =
  | { readonly kind: "api"; readonly route: ApiRoute; readonly template: string; readonly param: string }
  | { readonly kind: "file"; readonly template: string; readonly token: string }
  | { readonly kind: "method-not-allowed"; readonly template: string; readonly allow: string }
  /** `template` is "*" for paths the service does not have. */
  | { readonly kind: "not-found"; readonly template: string };

export function matchRoute(method: string, pathname: string): RouteMatch {
  for (const { template, pattern } of TEMPLATES) {
    const found = pattern.exec(pathname);
    if (!found) continue;
    const param = decodeURIComponent(found[1] ?? "");
    if (template === "/files/:token") {
      if (method === "GET" || method === "HEAD") return { kind: "file", template, token: param };
      return { kind: "method-not-allowed", template, allow: "GET, HEAD" };
    }
    const route = API_ROUTES.find((r) => r === `${method} ${template}`);
    if (route) return { kind: "api", route, template, param };
    const allow = API_ROUTES.filter((r) => r.endsWith(` ${template}`)).map((r) => r.split(" ")[0]);
    return { kind: "method-not-allowed", template, allow: allow.join(", ") };
  }
  return { kind: "not-found", template: "*" };
}
