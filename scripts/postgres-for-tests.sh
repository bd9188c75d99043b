#!/usr/bin/env bash
# Makes a PostgreSQL server reachable for the test suite (the store tests run against a real
# one): installs Debian's postgresql where it is missing, starts the cluster, and creates the role
# the tests connect as (reel_test, allowed to create databases: each test makes its own).
# Needs root for the first two steps; prints what it did, and exits 0 when the server answers.
# Called by .ci/run, and with --no-install by the test suite's global setup (test/global-setup.ts)
# when run as root: a developer's `npm test` starts an installed server but never runs apt-get.
set -euo pipefail

install=yes
if [ "${1:-}" = --no-install ]; then install=no; fi

ROLE=reel_test
PASSWORD=reel_test
PORT=${REEL_TEST_PG_PORT:-5432}

if ! command -v pg_lsclusters >/dev/null 2>&1; then
  if [ "$install" = no ]; then echo "postgres-for-tests: PostgreSQL is not installed (.ci/run installs it; or apt-get install postgresql, as root)"; exit 1; fi
  if [ "$(id -u)" != 0 ]; then echo "postgres-for-tests: PostgreSQL is not installed (apt-get install postgresql, as root)"; exit 1; fi
  echo "postgres-for-tests: installing Debian's postgresql"
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null
fi

cluster=$(pg_lsclusters --no-header | awk 'NR==1 {print $1" "$2" "$4}')
if [ -z "$cluster" ]; then echo "postgres-for-tests: no PostgreSQL cluster (pg_createcluster)"; exit 1; fi
read -r version name status <<<"$cluster"
if [ "$status" != online ]; then
  if [ "$(id -u)" != 0 ]; then echo "postgres-for-tests: cluster $version/$name is down; start it as root: pg_ctlcluster --skip-systemctl-redirect $version $name start"; exit 1; fi
  echo "postgres-for-tests: starting cluster $version/$name"
  pg_ctlcluster --skip-systemctl-redirect "$version" "$name" start
fi

as_postgres() { if [ "$(id -u)" = 0 ]; then su postgres -c "$1"; else eval "$1"; fi; }
as_postgres "psql -qtAX -p $PORT -c \"DO \\\$\\\$ BEGIN
  IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '$ROLE') THEN
    CREATE ROLE $ROLE LOGIN CREATEDB PASSWORD '$PASSWORD';
  END IF;
END \\\$\\\$;\"" >/dev/null
# A test's database is dropped WITH (FORCE) after it: an autovacuum worker busy in it at that moment
# can only be ended by a member of pg_signal_backend.
as_postgres "psql -qtAX -p $PORT -c 'GRANT pg_signal_backend TO $ROLE'" >/dev/null
# The fleet bench counts the claims' checks of the account's bound in its own databases
# (pg_stat_user_functions), which needs track_functions there; PostgreSQL 15 lets a role be granted
# that setting (an older server: the bench says it cannot count them).
as_postgres "psql -qtAX -p $PORT -c 'GRANT SET ON PARAMETER track_functions TO $ROLE'" >/dev/null 2>&1 || true
echo "postgres-for-tests: ready at postgres://$ROLE@127.0.0.1:$PORT (password in REEL_TEST_PG_URL's default)"
