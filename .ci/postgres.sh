# A throwaway PostgreSQL cluster for the tests, from Debian's `postgresql` package.
# Source this file, then `start_postgres` (exports TROUPE_TEST_POSTGRES_URL) and
# `stop_postgres` (stops the server, removes its folder). The server runs as the `postgres`
# user (it refuses root), listens on 127.0.0.1 only, with password authentication so the
# tests can check what wrong credentials do.

# Installs the package when no server binaries are there (needs root, as CI is).
ensure_postgres() {
  if ! ls -d /usr/lib/postgresql/*/bin/postgres >/dev/null 2>&1; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq postgresql >/dev/null
  fi
}

start_postgres() {
  ensure_postgres
  PG_BIN="$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n 1)"
  PG_DIR="$(mktemp -d /tmp/troupe-pg.XXXXXX)"
  # A free loopback port, chosen by the kernel.
  PG_PORT="$(node -e "const s=require('net').createServer().listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})")"
  local password
  password="troupe-$(node -e "console.log(require('crypto').randomBytes(9).toString('hex'))")"
  mkdir -p "$PG_DIR/data" "$PG_DIR/sock"
  printf '%s\n' "$password" >"$PG_DIR/pwfile"
  chown -R postgres:postgres "$PG_DIR"
  chmod 700 "$PG_DIR"
  runuser -u postgres -- "$PG_BIN/initdb" -D "$PG_DIR/data" -U postgres --pwfile="$PG_DIR/pwfile" \
    --auth=scram-sha-256 --encoding=UTF8 --locale=C.UTF-8 >"$PG_DIR/initdb.log" 2>&1 ||
    { cat "$PG_DIR/initdb.log" >&2; return 1; }
  # fsync off: a throwaway cluster; the store's transactions are what the tests check.
  runuser -u postgres -- "$PG_BIN/pg_ctl" -D "$PG_DIR/data" -l "$PG_DIR/server.log" -w \
    -o "-p $PG_PORT -k $PG_DIR/sock -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200" start >/dev/null ||
    { cat "$PG_DIR/server.log" >&2; return 1; }
  runuser -u postgres -- env PGPASSWORD="$password" "$PG_BIN/createdb" -h 127.0.0.1 -p "$PG_PORT" -U postgres troupe_test
  export TROUPE_TEST_POSTGRES_URL="postgres://postgres:$password@127.0.0.1:$PG_PORT/troupe_test"
  export PG_BIN PG_DIR PG_PORT
}

stop_postgres() {
  if [ -n "${PG_DIR:-}" ] && [ -d "$PG_DIR/data" ]; then
    runuser -u postgres -- "$PG_BIN/pg_ctl" -D "$PG_DIR/data" -m fast -w stop >/dev/null 2>&1 || true
    rm -rf "$PG_DIR"
  fi
}
