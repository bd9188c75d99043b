// The secrets of a store URL: the password as `user:password@` or as a key of the query
// (`?password=`, the driver logs in with it), and the other keys libpq reads as secrets (passfile,
// sslpassword, sslkey, oauth_client_secret). reel.yaml refuses each at its line and column with
// where it belongs; given by --store or REEL_STORE, none shows in the first line, in --json, in a
// message, or in the log files under the state folder. Real runs on a real PostgreSQL.
import { readdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runCli, writeTree } from "../helpers/cli.js";
import { usePostgres } from "../helpers/postgres.js";
import { useSandboxes } from "../helpers/sandboxes.js";
import { tempDir } from "../helpers/temp-dir.js";

const sandbox = useSandboxes();
const database = usePostgres();

const PROMO = `version: 1
name: promo
defaults:
  model: actor-1
  resolution: 720p
videos:
  - id: teaser
    chunks:
      - duration: 5
        text: "a mug on a table"
`;

/** Every file under `dir`, as text. */
async function everyFileText(dir: string): Promise<string> {
  let text = "";
  for (const entry of await readdir(dir, { recursive: true, withFileTypes: true })) {
    if (entry.isFile()) text += await readFile(join(entry.parentPath, entry.name), "utf8");
  }
  return text;
}

describe("a store URL's secrets", () => {
  it("reel.yaml refuses each form at its line and column, saying where the secret belongs, and never echoes it", async () => {
    const forms: { store: string; at: string; said: string }[] = [
      {
        store: "postgres://me:S3cret-userinfo@db/reel",
        at: ":S3cret",
        said: "store holds a password (user:password@), which would be committed with this file: remove it, and give it with PGPASSWORD or ~/.pgpass",
      },
      {
        store: '"postgres://me@db/reel?password=S3cret-query"',
        at: "password=",
        said: "store holds a password (password=), which would be committed with this file: remove it, and give it with PGPASSWORD or ~/.pgpass",
      },
      {
        store: "postgres://me@db/reel?sslmode=disable&pass%77ord=S3cret-encoded",
        at: "pass%77ord=",
        said: "store holds a password (pass%77ord=), which would be committed with this file: remove it, and give it with PGPASSWORD or ~/.pgpass",
      },
      {
        store: "postgres://me@db/reel?PASSWORD=S3cret-upper",
        at: "PASSWORD=",
        said: "store holds a password (PASSWORD=), which would be committed with this file: remove it, and give it with PGPASSWORD or ~/.pgpass",
      },
      {
        store: "postgres://me@db/reel?passfile=/home/me/S3cret-passfile",
        at: "passfile=",
        said: "store holds a password file (passfile=), which would be committed with this file: remove it, and name it with PGPASSFILE, or keep the password in ~/.pgpass",
      },
      {
        store: "postgres://me@db/reel?sslpassword=S3cret-passphrase",
        at: "sslpassword=",
        said: "store holds the client key's passphrase (sslpassword=), which would be committed with this file: remove it, and give the URL with it only in REEL_STORE or --store",
      },
      {
        store: "postgres://me@db/reel?sslmode=require&sslkey=/home/me/S3cret-key.pem",
        at: "sslkey=",
        said: "store holds the client key's file (sslkey=), which would be committed with this file: remove it, and give the URL with it only in REEL_STORE or --store",
      },
    ];
    const root = await tempDir();
    await writeTree(root, { "promo.yaml": PROMO });
    for (const form of forms) {
      const line = `store: ${form.store}`;
      await writeFile(join(root, "reel.yaml"), `version: 1\n${line}\n`);
      const plan = await runCli(["plan", "promo.yaml"], { cwd: root, env: {} });
      expect(plan.code, form.store).toBe(2);
      expect(plan.stderr).toContain(`reel.yaml:2:${line.indexOf(form.at) + 1}: ${form.said}`);
      expect(plan.stdout + plan.stderr).not.toMatch(/S3cret/);
    }
  });

  it("given by --store or REEL_STORE, no form shows in the first line, in --json, in a message or in the log files", async (context) => {
    const url = new URL(await database(context));
    const password = url.password; // reel_test's, which is also its name: looked for as written in the URL
    url.password = "";
    const base = url.toString();
    const s = await sandbox();
    const dir = await tempDir();
    await writeTree(dir, { "promo.yaml": PROMO, "key.pem": "not a key" });
    const keyFile = join(dir, "key.pem");
    const forms: { store: string; hidden: string[]; shown: string }[] = [
      {
        store: base.replace("reel_test@", `reel_test:${password}@`),
        hidden: [`:${password}@`],
        shown: "postgres://reel_test:***@",
      },
      { store: `${base}?password=${password}`, hidden: [`password=${password}`], shown: "?password=***" },
      {
        store: `${base}?application_name=reel&pass%77ord=${password}`,
        hidden: [`ord=${password}`],
        shown: "&pass%77ord=***",
      },
      {
        store: `${base}?password=${password}&passfile=/nowhere/PASSFILE-x1&sslpassword=PASSPHRASE-x2&oauth_client_secret=OAUTH-x3`,
        hidden: [`password=${password}`, "PASSFILE-x1", "PASSPHRASE-x2", "OAUTH-x3"],
        shown: "?password=***&passfile=***&sslpassword=***&oauth_client_secret=***",
      },
      {
        // The key is read, and the server (no SSL here) refuses: the message names the store masked too.
        store: `${base}?password=${password}&sslkey=${keyFile}`,
        hidden: [`password=${password}`, keyFile],
        shown: "?password=***&sslkey=***",
      },
    ];
    const env: Record<string, string> = { REEL_BASE_URL: s.baseUrl, REEL_API_KEY: s.apiKey };
    for (const [i, form] of forms.entries()) {
      // Odd ones by the flag, even ones by the environment.
      const given =
        i % 2 === 1
          ? { argv: ["--store", form.store], env }
          : { argv: [], env: { ...env, REEL_STORE: form.store } };
      const run = await runCli(["run", "promo.yaml", "--json", ...given.argv], { cwd: dir, env: given.env });
      const status = await runCli(["status", "--json", ...given.argv], { cwd: dir, env: given.env });
      const plan = await runCli(["plan", "promo.yaml", ...given.argv], { cwd: dir, env: given.env });
      // The first line of run (on stderr, beside --json's document) and of plan (its stdout, once the
      // store answered; else its message names the store).
      const planFirst = plan.code === 0 ? plan.stdout.split("\n")[0]! : plan.stderr;
      for (const firstLine of [run.stderr.split("\n")[0]!, planFirst]) {
        expect(firstLine, form.store).toMatch(/^(reel run: |reel plan: cannot use the )?store postgres:\/\//);
        expect(firstLine).toContain(form.shown);
      }
      const json = JSON.parse(status.stdout) as { store?: string; error?: { message: string } };
      expect(json.store ?? json.error?.message).toContain(form.shown);
      const logs = await everyFileText(join(dir, ".reel"));
      for (const text of [
        run.stdout,
        run.stderr,
        status.stdout,
        status.stderr,
        plan.stdout,
        plan.stderr,
        logs,
      ]) {
        for (const secret of form.hidden) expect(text, form.store).not.toContain(secret);
      }
    }
  });
});
