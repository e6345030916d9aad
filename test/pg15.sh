#!/usr/bin/env bash
# Runs the integration and end-to-end tests again on PostgreSQL 15 (Debian's server), the oldest
# version we support, instead of the embedded PostgreSQL 18. Used by .ci/run.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=/usr/lib/postgresql/15/bin
if [ ! -x "$BIN/postgres" ]; then
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends postgresql-15 >/dev/null
fi
dir=$(mktemp -d /tmp/medallion-pg15-XXXXXX)
chmod 755 "$dir"
chown postgres "$dir"
port=$(node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')
stop() { su postgres -c "$BIN/pg_ctl -D $dir/data stop -m fast" >/dev/null 2>&1 || true; rm -rf "$dir"; }
trap stop EXIT
su postgres -c "$BIN/initdb -D $dir/data -U postgres --auth=trust -E UTF8 --locale=C" >/dev/null
su postgres -c "$BIN/pg_ctl -D $dir/data -o '-p $port -c listen_addresses=127.0.0.1 -k $dir' -l $dir/log -w start" >/dev/null
echo "pg15: $($BIN/postgres --version) on port $port"
# As docs/bronze.md tells an operator: the service runs its queries as a plain LOGIN role that
# owns nothing; DATABASE_URL's role (here the superuser) owns the schema and runs migrations.
"$BIN/psql" "postgres://postgres@127.0.0.1:$port/postgres" -qc 'CREATE ROLE medallion_runtime LOGIN'
DATABASE_URL="postgres://postgres@127.0.0.1:$port/postgres" \
DATABASE_RUNTIME_URL="postgres://medallion_runtime@127.0.0.1:$port/postgres" \
  npx jest --runInBand test/
