// node-postgres, loaded for the whole store here. On Node 20, which has no `navigator`, pg asks
// whether it runs in a Cloudflare Worker by making a `Response`: that loads Node's own fetch, about
// 15 ms of CPU at every runner's start for nothing. So pg is loaded beside a `navigator` that says
// Node.js, there for the synchronous require alone (no other code runs meanwhile); Node 21 and later
// have their own and it is left alone.
import { createRequire } from "node:module";
import type Pg from "pg";

const require = createRequire(import.meta.url);

function loadPg(): typeof Pg {
  if ("navigator" in globalThis) return require("pg") as typeof Pg;
  Object.defineProperty(globalThis, "navigator", { value: { userAgent: "Node.js" }, configurable: true });
  try {
    return require("pg") as typeof Pg;
  } finally {
    delete (globalThis as { navigator?: unknown }).navigator;
  }
}

export const { Client, DatabaseError, Pool } = loadPg();
