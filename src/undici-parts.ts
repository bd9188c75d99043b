// The parts of undici reel uses, each loaded from its own file: undici's index loads every file of
// the package (fetch, WebSocket, caches, mock agents, interceptors), about 40 ms of CPU at every
// start of every runner for the three names reel needs. The package has no "exports" map, so its
// files are its public paths; the types are its own (undici-files.d.ts).
import AgentClass from "undici/lib/dispatcher/agent.js";
import requestOn from "undici/lib/api/api-request.js";
import type { Dispatcher, FormData as FormDataClass } from "undici";

export const Agent = AgentClass;
export type Agent = AgentClass;

export type RequestOptions = Omit<Dispatcher.RequestOptions, "origin" | "path" | "method"> & {
  readonly method: Dispatcher.HttpMethod;
  /** Always given: a request never goes through the process's global dispatcher. */
  readonly dispatcher: Dispatcher;
};

/** undici's `request(url, options)`, through the dispatcher given. */
export function request(url: string | URL, options: RequestOptions): Promise<Dispatcher.ResponseData> {
  const { origin, pathname, search } = new URL(url);
  const { dispatcher, ...rest } = options;
  return requestOn.call(dispatcher, { ...rest, origin, path: `${pathname}${search}` });
}

/** undici's FormData, loaded when first needed (an upload): it brings much of undici's fetch. */
export async function newFormData(): Promise<FormDataClass> {
  const { FormData } = await import("undici/lib/web/fetch/formdata.js");
  return new FormData();
}
