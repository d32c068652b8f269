#!/bin/sh
# Creates the Temporal and visibility databases in PostgreSQL and brings their schemas up to the
# server's version, with the schema tool's embedded schemas (the tool and the server come from the
# same Temporal release). Idempotent: safe on every start.
# Run by docker-compose.yml (service temporal-schema, in the temporalio/admin-tools image) and by
# `npm run server -- --postgres` (scripts/postgres-server.ts, with the tool built by `go install`):
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
