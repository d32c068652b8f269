#!/bin/sh
# Creates the Temporal and visibility databases in PostgreSQL and brings their schemas up to the
# server's version, with the schema tool's embedded schemas (the tool and the server come from the
# same Temporal release). Idempotent: safe on every start.
# Run by docker-compose.yml (service temporal-schema, in the temporalio/admin-tools image) and by
# `npm run server -- --postgres` (local-servers/postgres-server.ts, with the tool built by `go install`):
# one script, so both set up the database the same way.
set -eu

: "${POSTGRES_SEEDS:?POSTGRES_SEEDS is required}"
: "${POSTGRES_USER:?POSTGRES_USER is required}"
: "${SQL_PASSWORD:?SQL_PASSWORD is required}"
PORT="${DB_PORT:-5432}"
SQL_TOOL="${SQL_TOOL:-temporal-sql-tool}"

if command -v nc >/dev/null 2>&1; then
  until nc -z -w 5 "$POSTGRES_SEEDS" "$PORT"; do
    echo "waiting for PostgreSQL at $POSTGRES_SEEDS:$PORT"
    sleep 2
  done
fi

sql() {
  "$SQL_TOOL" --plugin postgres12 --ep "$POSTGRES_SEEDS" -u "$POSTGRES_USER" -p "$PORT" --db "$@"
}

for db in temporal temporal_visibility; do
  case "$db" in
    temporal) schema=postgresql/v12/temporal ;;
    *) schema=postgresql/v12/visibility ;;
  esac
  # `create` fails when the database exists; that is the normal case after the first start.
  sql "$db" create >/dev/null 2>&1 && echo "database $db created" || echo "database $db already exists"
  # setup-schema -v 0.0 only creates the schema_version table the first time.
  sql "$db" setup-schema -v 0.0 >/dev/null 2>&1 || echo "schema of $db already initialised"
  sql "$db" update-schema --schema-name "$schema"
done
echo "PostgreSQL schemas are up to date"

# The agent's refunds ledger: its own database and login, owned by that login, closed to others.
# The retail store shares it (compose points AGENT_RETAIL_DATABASE_URL there too). The workers
# create their tables on first use. Skipped when LEDGER_DB is unset.
if [ -n "${LEDGER_DB:-}" ]; then
  : "${LEDGER_USER:?LEDGER_USER is required with LEDGER_DB}"
  : "${LEDGER_PASSWORD:?LEDGER_PASSWORD is required with LEDGER_DB}"
  PGPASSWORD="$SQL_PASSWORD" psql -X -q -v ON_ERROR_STOP=1 -h "$POSTGRES_SEEDS" -p "$PORT" -U "$POSTGRES_USER" -d postgres \
    -v db="$LEDGER_DB" -v user="$LEDGER_USER" -v pw="$LEDGER_PASSWORD" <<'SQL'
SELECT format('CREATE ROLE %I LOGIN', :'user') WHERE NOT EXISTS (SELECT FROM pg_roles WHERE rolname = :'user') \gexec
SELECT format('ALTER ROLE %I PASSWORD %L', :'user', :'pw') \gexec
SELECT format('CREATE DATABASE %I OWNER %I', :'db', :'user') WHERE NOT EXISTS (SELECT FROM pg_database WHERE datname = :'db') \gexec
SELECT format('REVOKE ALL ON DATABASE %I FROM PUBLIC', :'db') \gexec
SQL
  echo "refunds ledger: database $LEDGER_DB, user $LEDGER_USER"
fi
