#!/bin/sh
# Creates the Temporal and visibility databases in PostgreSQL and brings their schemas up to the
# version the server image expects. Idempotent: safe on every `docker compose up`.
# Runs in the temporalio/admin-tools image (temporal-sql-tool); see docker-compose.yml.
set -eu

: "${POSTGRES_SEEDS:?POSTGRES_SEEDS is required}"
: "${POSTGRES_USER:?POSTGRES_USER is required}"
: "${SQL_PASSWORD:?SQL_PASSWORD is required}"
PORT="${DB_PORT:-5432}"
SCHEMA_DIR=/etc/temporal/schema/postgresql/v12

until nc -z -w 5 "$POSTGRES_SEEDS" "$PORT"; do
  echo "waiting for PostgreSQL at $POSTGRES_SEEDS:$PORT"
  sleep 2
done

sql() {
  temporal-sql-tool --plugin postgres12 --ep "$POSTGRES_SEEDS" -u "$POSTGRES_USER" -p "$PORT" --db "$@"
}

for db in temporal temporal_visibility; do
  case "$db" in
    temporal) versions="$SCHEMA_DIR/temporal/versioned" ;;
    *) versions="$SCHEMA_DIR/visibility/versioned" ;;
  esac
  # `create` fails when the database exists; that is the normal case after the first start.
  sql "$db" create || echo "database $db already exists"
  # setup-schema -v 0.0 only creates the schema_version table the first time.
  sql "$db" setup-schema -v 0.0 || echo "schema of $db already initialised"
  sql "$db" update-schema -d "$versions"
done
echo "PostgreSQL schemas are up to date"
