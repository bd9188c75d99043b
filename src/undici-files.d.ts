// The files of undici that reel loads one by one (see undici-parts.ts): their types are undici's own.
declare module "undici/lib/dispatcher/agent.js" {
  import { Agent } from "undici";
  export = Agent;
}
declare module "undici/lib/api/api-request.js" {
  import type { Dispatcher } from "undici";
  /** Dispatcher.prototype.request, called with the dispatcher as `this`. */
  function request(this: Dispatcher, options: Dispatcher.RequestOptions): Promise<Dispatcher.ResponseData>;
  export = request;
}
declare module "undici/lib/web/fetch/formdata.js" {
  import { FormData } from "undici";
  export { FormData };
}
