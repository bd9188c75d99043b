// Named budgets on PostgreSQL: src/state/sqlite/sql/named-budgets.ts's statements, which it mirrors.
// A spend (namedSpendSql) is part of the statement of the intent that spends (claims.ts: claimIn;
// fleet.ts: startSpeech, in its transaction). Its UPDATE's WHERE is the check: under READ COMMITTED,
// a second runner's lock of the same row waits for the first's commit and then reads the row as
// committed, so no interleaving of runners passes a cap.
import type pg from "pg";
import { BudgetReachedError, BUDGET_NOTICE_KIND, BUDGET_THRESHOLDS } from "../../named-budget.js";
import type { NamedBudget, NamedBudgetChange, NamedCharge } from "../../job-store.js";
import { BUDGET_TOLERANCE } from "../../ledger-rule.js";
import {
  type CapsSql,
  passesSql,
  refusalNotice,
  setBudgetSql,
  setBudgetValues,
  sharePassedSql,
} from "../../budget-share-rule.js";
import { type PgContext, toNumber } from "./context.js";

// Named as NamedBudget's fields, as the state file's are: only the bigint columns are left to convert.
const COLUMNS = `id, name, max_seconds AS "maxSeconds", max_credits AS "maxCredits", prices_file, prices_json,
  spent_seconds AS "spentSeconds", spent_credits AS "spentCredits", created_at AS "createdAt", updated_at AS "updatedAt"`;

type Row = Omit<NamedBudget, "prices" | "id" | "createdAt" | "updatedAt"> & {
  id: string;
  createdAt: string;
  updatedAt: string;
  prices_file: string | null;
  prices_json: string | null;
};

function budgetOf(row: Row): NamedBudget {
  const { prices_file: file, prices_json: json, id, createdAt, updatedAt, ...rest } = row;
  return {
    ...rest,
    id: toNumber(id),
    createdAt: toNumber(createdAt),
    updatedAt: toNumber(updatedAt),
    prices: file !== null && json !== null ? { file, json } : null,
  };
}

export async function findBudget(c: PgContext, name: string): Promise<NamedBudget | undefined> {
  const { rows } = await c.pool.query<Row>(`SELECT ${COLUMNS} FROM budgets WHERE name = $1`, [name]);
  return rows[0] && budgetOf(rows[0]);
}

export async function listBudgets(c: PgContext): Promise<NamedBudget[]> {
  const { rows } = await c.pool.query<Row>(`SELECT ${COLUMNS} FROM budgets ORDER BY name`);
  return rows.map(budgetOf);
}

export async function setBudget(c: PgContext, name: string, change: NamedBudgetChange): Promise<NamedBudget> {
  const { rows } = await c.pool.query<Row>(
    setBudgetSql((n) => `$${n}`, "least", COLUMNS),
    setBudgetValues(name, change, c.now()),
  );
  return budgetOf(rows[0]!);
}

/** A named charge in SQL: the budget's id, the seconds and credits spent, when, and by which runner. */
export interface NamedSpendSql {
  readonly budget: string;
  readonly seconds: string;
  readonly credits: string;
  readonly at: string;
  readonly runner: string;
}

/**
 * The CTEs that spend a named charge for the row of CTE `named_charge` (job_id, attempt, speech; none:
 * nothing is spent), in the statement of the intent it goes with: recorded once per (job, attempt)
 * (met again, a claim whose refund a crash cut off made again: spent already); the budget's row taken
 * and read as committed (FOR NO KEY UPDATE waits for another spend's commit and reads its row); the
 * spend only if it fits, and with it the shares it passed, each claimed and told once (`told`). A
 * charge that does not fit spends nothing: the statement's REFUSED_SQL then undoes it whole.
 */
export function namedSpendSql(p: NamedSpendSql): string {
  const after = (b: string): CapsSql => ({
    maxSeconds: `${b}.max_seconds`,
    maxCredits: `${b}.max_credits`,
    spentSeconds: `${b}.spent_seconds`,
    spentCredits: `${b}.spent_credits`,
  });
  const spending = {
    ...after("b"),
    spentSeconds: `b.spent_seconds + ${p.seconds}`,
    spentCredits: `b.spent_credits + ${p.credits}`,
  };
  const bySeconds = passesSql(after("spent"), "seconds", "t.p");
  const ofCap = (seconds: string, credits: string): string =>
    `CASE WHEN ${bySeconds} THEN spent.${seconds} ELSE spent.${credits} END`;
  return `recorded AS (
       INSERT INTO budget_charges (budget_id, job_id, attempt, speech, seconds, credits, at)
         SELECT ${p.budget}, job_id, attempt, speech, ${p.seconds}, ${p.credits}, ${p.at} FROM named_charge
         ON CONFLICT (budget_id, job_id, attempt) WHERE job_id IS NOT NULL DO NOTHING
         RETURNING budget_id),
     budget_was AS (
       SELECT ${COLUMNS}, noticed_percent FROM budgets WHERE id IN (SELECT budget_id FROM recorded) FOR NO KEY UPDATE),
     spent AS (
       UPDATE budgets b SET spent_seconds = ${spending.spentSeconds}, spent_credits = ${spending.spentCredits},
                            updated_at = ${p.at}, noticed_percent = greatest(b.noticed_percent, ${sharePassedSql(spending)})
         FROM budget_was WHERE b.id = budget_was.id
           AND (b.max_seconds IS NULL OR ${spending.spentSeconds} <= b.max_seconds + ${BUDGET_TOLERANCE})
           AND (b.max_credits IS NULL OR ${spending.spentCredits} <= b.max_credits + ${BUDGET_TOLERANCE})
         RETURNING b.name, b.max_seconds, b.max_credits, b.spent_seconds, b.spent_credits, b.noticed_percent,
                   budget_was.noticed_percent AS told_before),
     told AS (
       INSERT INTO events (at, runner_id, kind, detail)
         SELECT ${p.at}, ${p.runner}, '${BUDGET_NOTICE_KIND}',
                json_build_object('percent', t.p, 'budget', spent.name, 'cap', CASE WHEN ${bySeconds} THEN 'seconds' ELSE 'credits' END,
                                  'spent', ${ofCap("spent_seconds", "spent_credits")}, 'max', ${ofCap("max_seconds", "max_credits")})::text
           FROM spent CROSS JOIN unnest(ARRAY[${BUDGET_THRESHOLDS.join(", ")}]) AS t(p)
           WHERE t.p > spent.told_before AND t.p <= spent.noticed_percent ORDER BY t.p)`;
}

/**
 * A result column of a statement with namedSpendSql: a charge recorded that did not fit raises
 * reel_budget_refused (migration 17), the budget's row as it was in the error, and the whole
 * statement is undone (refusalOf reads it).
 */
export const REFUSED_SQL = `CASE WHEN EXISTS (SELECT 1 FROM recorded) AND NOT EXISTS (SELECT 1 FROM spent)
  THEN reel_budget_refused((SELECT row_to_json(budget_was)::text FROM budget_was)) END AS refused`;

/** The SQLSTATE of reel_budget_refused. */
const REFUSED_STATE = "RB001";

/** A statement's failure as BudgetReachedError when the budget refused `charge` (REFUSED_SQL). */
export function refusalOf(error: unknown, charge: NamedCharge): unknown {
  const { code, detail } = error as { code?: unknown; detail?: unknown };
  if (code !== REFUSED_STATE || typeof detail !== "string") return error;
  return new BudgetReachedError(budgetOf(JSON.parse(detail) as Row), charge);
}

/**
 * Spends `charge` for a speech intent, in the caller's transaction on `client`, in one statement.
 * Throws BudgetReachedError when it does not fit; the caller's transaction is then rolled back whole.
 */
export async function spendOnSpeech(
  client: pg.ClientBase,
  now: number,
  charge: NamedCharge,
  speech: string,
  runnerId: number,
): Promise<void> {
  await client
    .query(
      `WITH named_charge AS (SELECT NULL::bigint AS job_id, NULL::integer AS attempt, $5::text AS speech),
         ${namedSpendSql({ budget: "$1::bigint", seconds: "$2::double precision", credits: "$3::double precision", at: "$4::bigint", runner: "$6::bigint" })}
       SELECT ${REFUSED_SQL}`,
      [charge.budget, charge.seconds, charge.credits, now, speech, runnerId],
    )
    .catch((error: unknown) => {
      throw refusalOf(error, charge);
    });
}

/** Gives back the named charge of job `jobId`'s attempt `attempt`, if any: one statement, so once. */
export async function refundNamedVideo(c: PgContext, jobId: number, attempt: number): Promise<void> {
  await refund(c, "SELECT id FROM budget_charges WHERE job_id = $1 AND attempt = $2", [jobId, attempt]);
}

/** Gives back the last named charge of this speech, if any. */
export async function refundNamedSpeech(c: PgContext, speech: string): Promise<void> {
  await refund(c, "SELECT max(id) FROM budget_charges WHERE speech = $1", [speech]);
}

async function refund(c: PgContext, which: string, values: unknown[]): Promise<void> {
  await c.pool.query(
    `WITH gone AS (DELETE FROM budget_charges WHERE id IN (${which}) RETURNING budget_id, seconds, credits),
       total AS (SELECT budget_id, sum(seconds) AS seconds, sum(credits) AS credits FROM gone GROUP BY budget_id)
     UPDATE budgets SET spent_seconds = spent_seconds - total.seconds, spent_credits = spent_credits - total.credits,
                        updated_at = $${values.length + 1}
       FROM total WHERE budgets.id = total.budget_id`,
    [...values, c.now()],
  );
}

/**
 * The handler of a spending transaction's failure: a charge the named budget refused claims its last
 * share's notice (one statement: claimed and recorded together), unless some runner told it before.
 * Rethrows the failure.
 */
export function noticingRefusal(c: PgContext, runnerId: number): (error: unknown) => Promise<never> {
  return async (error) => {
    if (error instanceof BudgetReachedError) {
      const notice = refusalNotice(error.budget, error.charge);
      await c.pool
        .query(
          `WITH claimed AS (
             UPDATE budgets SET noticed_percent = $2 WHERE id = $1 AND noticed_percent < $2 RETURNING id)
           INSERT INTO events (at, runner_id, kind, detail) SELECT $3, $4, $5, $6 FROM claimed`,
          [error.budget.id, notice.percent, c.now(), runnerId, BUDGET_NOTICE_KIND, JSON.stringify(notice)],
        )
        .catch(() => {}); // the store unreachable: the refusal is what matters
    }
    throw error;
  };
}
