#!/bin/bash
# A PostgreSQL server of a test's own on 127.0.0.1 (Debian's postgresql package):
#   postgres.sh start DIR   initdb in DIR/data (superuser "postgres", trust on loopback), start it
#                           on a free port with its socket in DIR; prints the port
#   postgres.sh stop DIR    stops it (fast shutdown)
# As root, the server runs as the package's "postgres" user (PostgreSQL refuses root); DIR is
# handed to that user (so DIR's parent must be one it may enter, as /tmp is: pass mktemp -d's
# own directory). fsync is off: what a test writes need not survive the machine.
set -euo pipefail

cmd=${1:?start or stop} dir=${2:?a directory}
bindir=$(find /usr/lib/postgresql -maxdepth 2 -name bin -type d 2>/dev/null | sort -V | tail -n1)
[ -n "$bindir" ] || { echo "postgres.sh: no /usr/lib/postgresql/*/bin (apt-get install postgresql)" >&2; exit 2; }
owner=$(id -un)
[ "$(id -u)" != 0 ] || owner=postgres
as_owner() {
  if [ "$(id -u)" = 0 ]; then runuser -u "$owner" -- "$@"; else "$@"; fi
}

case $cmd in
  start)
    mkdir -p "$dir"
    [ "$(id -u)" != 0 ] || chown "$owner" "$dir"
    as_owner "$bindir/initdb" -D "$dir/data" -U postgres --auth=trust -E UTF8 --no-sync \
      >"$dir/initdb.log" 2>&1 || { cat "$dir/initdb.log" >&2; exit 1; }
    for _ in $(seq 20); do
      port=$((20000 + RANDOM % 20000))
      if as_owner "$bindir/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 30 \
        -o "-F -h 127.0.0.1 -p $port -k $dir" start >/dev/null 2>&1; then
        echo "$port"
        exit 0
      fi
    done
    echo "postgres.sh: the server did not start:" >&2
    cat "$dir/server.log" >&2 || true
    exit 1
    ;;
  stop)
    as_owner "$bindir/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null 2>&1 || true
    ;;
  *)
    echo "postgres.sh: start or stop, not $cmd" >&2
    exit 2
    ;;
esac
