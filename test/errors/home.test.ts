// Every error class reel raises comes from one folder, src/errors/, and that folder stands at the
// bottom of reel's imports: any part may raise or catch any error without importing a part above
// it. Read from the sources, as a class defined elsewhere would compile and run the same.
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const SRC = fileURLToPath(new URL("../../src/", import.meta.url));
const ERRORS = join(SRC, "errors");

/** The one class kept out, and why: it carries the store's NamedBudget, which src/errors cannot import. */
const KEPT_OUT: Readonly<Record<string, string>> = { BudgetReachedError: "state/named-budget.ts" };

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sources(path);
    return entry.name.endsWith(".ts") && !entry.name.endsWith(".d.ts") ? [path] : [];
  });
}

/** Every `class A extends B` of src/, with the file (relative to src/) that defines it. */
function classes(): { name: string; base: string; file: string }[] {
  return sources(SRC).flatMap((path) =>
    [...readFileSync(path, "utf8").matchAll(/^(?:export )?class (\w+) extends (\w+)\b/gm)].map((m) => ({
      name: m[1]!,
      base: m[2]!,
      file: relative(SRC, path),
    })),
  );
}

describe("src/errors", () => {
  it("defines every class that derives from ReelError (but the one kept out beside its type)", () => {
    const all = classes();
    const reel = new Set(["ReelError"]);
    // Classes derive from classes of other files: grow the set until nothing more joins it.
    for (let grew = true; grew;) {
      grew = false;
      for (const c of all)
        if (reel.has(c.base) && !reel.has(c.name)) {
          reel.add(c.name);
          grew = true;
        }
    }
    const elsewhere = all
      .filter((c) => reel.has(c.name) && !c.file.startsWith("errors/"))
      .map((c) => `${c.name} (${c.file})`);
    expect(elsewhere).toEqual(Object.entries(KEPT_OUT).map(([name, file]) => `${name} (${file})`));
    // The folder holds the service's, the store's, the engine's ... errors: far more than a few.
    expect([...reel].filter((name) => !KEPT_OUT[name]).length).toBeGreaterThan(30);
  });

  it("imports nothing of the rest of reel, not even a type", () => {
    const outside = sources(ERRORS).flatMap((path) =>
      [...readFileSync(path, "utf8").matchAll(/^(?:import|export)\b[^;]*?from "([^"]+)"/gms)]
        .map((m) => m[1]!)
        .filter((spec) => !spec.startsWith("./"))
        .map((spec) => `${relative(SRC, path)} -> ${spec}`),
    );
    expect(outside).toEqual([]);
  });
});
