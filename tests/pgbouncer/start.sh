#!/usr/bin/env bash
# Starts Debian's PgBouncer (apt-get install pgbouncer) on 127.0.0.1:6432 in transaction mode, in front of the
# PostgreSQL server on 127.0.0.1:5432, with its stock settings otherwise. Idempotent: a running one is kept.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
dir="${PGBOUNCER_DIR:-/tmp/butler-pgbouncer}"
if pg_isready -q -h 127.0.0.1 -p 6432 2>/dev/null; then
  # Ours (its pidfile names a live process), or something else on the port the tests expect PgBouncer on.
  if [ -f "$dir/pgbouncer.pid" ] && kill -0 "$(cat "$dir/pgbouncer.pid")" 2>/dev/null; then exit 0; fi
  echo "Something other than tests/pgbouncer answers on 127.0.0.1:6432; stop it first" >&2
  exit 1
fi
mkdir -p "$dir"
sed "s|@DIR@|$dir|g" "$here/pgbouncer.ini" > "$dir/pgbouncer.ini"
echo '"postgres" ""' > "$dir/userlist.txt"
# PgBouncer refuses to run as root.
if [ "$(id -u)" = 0 ]; then
  chown -R postgres "$dir"
  runuser -u postgres -- "$(command -v pgbouncer)" -d "$dir/pgbouncer.ini"
else
  pgbouncer -d "$dir/pgbouncer.ini"
fi
for _ in $(seq 1 30); do pg_isready -q -h 127.0.0.1 -p 6432 && exit 0; sleep 0.2; done
echo "PgBouncer did not start; see $dir/pgbouncer.log" >&2
exit 1
