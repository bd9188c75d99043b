// Every /v1 endpoint refuses a missing, malformed or wrong key with 401 and a JSON body, and a key
// changed while clients run takes effect at once. File addresses need no key, like a CDN's.
import { describe, expect, test } from "vitest";
import { actorRequest, idOf, withSandbox } from "./helpers.js";

const ENDPOINTS: readonly [string, string][] = [
  ["POST", "/v1/generations"],
  ["GET", "/v1/generations/1001"],
  ["POST", "/v1/audios"],
  ["POST", "/v1/assets"],
  ["GET", "/v1/assets/1001"],
  ["DELETE", "/v1/assets/1001"],
  ["GET", "/v1/unknown"],
];

describe("auth", () => {
  test.each(ENDPOINTS)("%s %s is 401 without a valid key", async (method, path) => {
    await withSandbox({ apiKey: "sk-right" }, async (api) => {
      for (const key of [null, "sk-wrong", "sk-right-but-longer"]) {
        const res = await api.call(method, path, {
          key,
          body: method === "GET" || method === "DELETE" ? undefined : {},
        });
        expect(res.status).toBe(401);
        expect(res.headers["www-authenticate"]).toBe("Bearer");
        expect(typeof res.json.detail).toBe("string");
        expect(res.text).not.toContain("sk-right");
      }
    });
  });

  test("a malformed Authorization header is 401", async () => {
    await withSandbox({ apiKey: "sk-right" }, async (api) => {
      const { request } = await import("undici");
      for (const authorization of ["sk-right", "Basic sk-right", "Bearer", "Bearer sk-right extra"]) {
        const res = await request(`${api.sandbox.baseUrl}/v1/generations/1`, { headers: { authorization } });
        await res.body.text();
        expect(res.statusCode, authorization).toBe(401);
      }
    });
  });

  test("setApiKey takes effect at once, and the 401 is counted", async () => {
    await withSandbox({}, async (api) => {
      const first = api.sandbox.apiKey;
      expect(first).toMatch(/^sk-sandbox-[0-9a-f]{32}$/);
      expect((await api.call("GET", "/v1/generations/5")).status).toBe(404);
      api.sandbox.setApiKey("sk-rotated");
      expect((await api.call("GET", "/v1/generations/5", { key: first })).status).toBe(401);
      expect((await api.call("GET", "/v1/generations/5")).status).toBe(404);
      expect(api.sandbox.counters.requestCount("GET", "/v1/generations/:id", 401)).toBe(1);
    });
  });

  test("result files are served without a key", async () => {
    await withSandbox({ timeScale: 0, preProcessingMs: 0 }, async (api) => {
      const id = idOf(await api.call("POST", "/v1/generations", { body: actorRequest() }));
      const task = await api.waitForFinal(id);
      const res = await fetch(task.json.resultVideoURL);
      expect(res.status).toBe(200);
      await res.arrayBuffer();
    });
  });
});
