#!/bin/bash
# The slurmdbd reference rig the capture scripts share (sacctmgr/capture.sh, sreport/capture.sh):
# Debian 12's real slurmdbd 22.05.8 on MariaDB, started by hand on 127.0.0.1 (no systemd, no
# slurmctld) under $R, with munge; and cap/capc, which run one command and keep its stdout,
# stderr and exit code under $OUT. Sourced, with R set (or the default below).
# sacctmgr ignores slurm.conf's AuthInfo=socket= when it connects to slurmdbd
# (AccountingStoragePass= names the munge socket instead).
R=${R:-/tmp/slurmdbd-ref}
MYSQL_PORT=3307
DBD_PORT=6819
MYSQL_SOCK=$R/mysql.sock
MUNGE_SOCK=$R/munge/munge.socket.2
DBPASS=slurmrefpw
export SLURM_CONF=$R/slurm.conf     # slurmdbd finds slurmdbd.conf in dirname($SLURM_CONF)
cd $R
write_confs() {
  mkdir -p $R/munge $R/log $R/run
  chmod 700 $R/munge
  cat > $R/my.cnf <<EOC
[mariadbd]
datadir=$R/mysql
socket=$MYSQL_SOCK
port=$MYSQL_PORT
bind-address=127.0.0.1
pid-file=$R/run/mariadbd.pid
log-error=$R/log/mariadbd.err
user=root
skip-name-resolve
innodb_buffer_pool_size=128M
innodb_log_file_size=64M
innodb_lock_wait_timeout=900
max_allowed_packet=16M
performance_schema=OFF
[client]
socket=$MYSQL_SOCK
EOC
  cat > $R/slurmdbd.conf <<EOC
# slurmdbd.conf for the reference capture (found via dirname(\$SLURM_CONF))
AuthType=auth/munge
AuthInfo=socket=$MUNGE_SOCK
DbdHost=localhost
DbdAddr=127.0.0.1
DbdPort=$DBD_PORT
SlurmUser=root
DebugLevel=info
LogFile=$R/log/slurmdbd.log
PidFile=$R/run/slurmdbd.pid
StorageType=accounting_storage/mysql
StorageHost=127.0.0.1
StoragePort=$MYSQL_PORT
StorageUser=slurm
StoragePass=$DBPASS
StorageLoc=slurm_acct_db
EOC
  chown root:root $R/slurmdbd.conf; chmod 600 $R/slurmdbd.conf
  cat > $R/slurm.conf <<EOC
# Minimal slurm.conf for the sacctmgr client (no slurmctld is running)
ClusterName=kubeslurm
SlurmctldHost=localhost
AuthType=auth/munge
AuthInfo=socket=$MUNGE_SOCK
CredType=cred/munge
AccountingStorageType=accounting_storage/slurmdbd
AccountingStorageHost=localhost
AccountingStoragePort=$DBD_PORT
AccountingStoragePass=$MUNGE_SOCK
AccountingStorageTRES=gres/gpu
GresTypes=gpu
SlurmUser=root
NodeName=localhost CPUs=1 State=UNKNOWN
PartitionName=debug Nodes=localhost Default=YES State=UP
EOC
  chmod 644 $R/slurm.conf
}

start_munge() {
  [ -f $R/munge/munge.key ] || mungekey --create --keyfile=$R/munge/munge.key --force
  chmod 600 $R/munge/munge.key
  munged --force --socket=$MUNGE_SOCK --key-file=$R/munge/munge.key \
    --pid-file=$R/run/munged.pid --log-file=$R/log/munged.log \
    --seed-file=$R/munge/munged.seed --num-threads=2
  munge -S $MUNGE_SOCK -n | unmunge -S $MUNGE_SOCK >/dev/null || { echo "munge self-test FAILED"; return 1; }
  echo "munge ok"
}

init_mysql() {
  rm -rf $R/mysql; mkdir -p $R/mysql
  mariadb-install-db --defaults-file=$R/my.cnf --datadir=$R/mysql --user=root \
    --auth-root-authentication-method=socket --skip-test-db > $R/log/mariadb-install-db.log 2>&1
}

start_mysql() {
  mariadbd --defaults-file=$R/my.cnf > $R/log/mariadbd.stdout 2>&1 &
  for i in $(seq 60); do mariadb --socket=$MYSQL_SOCK -uroot -e 'select 1' >/dev/null 2>&1 && break; sleep 1; done
  mariadb --socket=$MYSQL_SOCK -uroot <<EOS
CREATE USER IF NOT EXISTS 'slurm'@'127.0.0.1' IDENTIFIED BY '$DBPASS';
CREATE USER IF NOT EXISTS 'slurm'@'localhost' IDENTIFIED BY '$DBPASS';
GRANT ALL ON slurm_acct_db.* TO 'slurm'@'127.0.0.1';
GRANT ALL ON slurm_acct_db.* TO 'slurm'@'localhost';
FLUSH PRIVILEGES;
EOS
  echo "mariadb ok: $(mariadb --socket=$MYSQL_SOCK -uroot -N -e 'select version()')"
}

start_slurmdbd() {
  slurmdbd -D > $R/log/slurmdbd.stdout 2>&1 &
  echo $! > $R/run/slurmdbd.fgpid
  for i in $(seq 60); do
    timeout 10 sacctmgr -n show cluster >/dev/null 2>&1 && { echo "slurmdbd ok"; return 0; }
    sleep 1
  done
  echo "slurmdbd did not come up"; tail -20 $R/log/slurmdbd.log; return 1
}

stop_pidfile() { # name pidfile
  local p; [ -f "$2" ] && p=$(cat "$2") || return 0
  if kill -0 "$p" 2>/dev/null; then
    kill -TERM "$p"; for i in $(seq 30); do kill -0 "$p" 2>/dev/null || break; sleep 1; done
    echo "stopped $1 ($p)"
  fi
  rm -f "$2"
}

stop_all() {
  stop_pidfile slurmdbd $R/run/slurmdbd.fgpid
  rm -f $R/run/slurmdbd.pid
  stop_pidfile mariadbd $R/run/mariadbd.pid
  stop_pidfile munged $R/run/munged.pid
}

# ---------------------------------------------------------------- capture helpers
OUT=$R/out
SEQ=0
# cap NAME 'shell command'   -> out/NN_NAME.{cmd,stdout,stderr,rc}
cap() {
  local name="$1" cmd="$2" f
  SEQ=$((SEQ+1)); f=$(printf '%s/%02d_%s' "$OUT" "$SEQ" "$name")
  printf '%s' "$cmd" > "$f.cmd"
  ( cd $R; eval "$cmd" ) > "$f.stdout" 2> "$f.stderr" < /dev/null
  echo $? > "$f.rc"
  echo "$(basename "$f") rc=$(cat "$f.rc")"
}
# name derived from the command text
capc() { local n; n=$(printf '%s' "$1" | sed -e 's/[^A-Za-z0-9.=,%+-]/_/g'); cap "$n" "timeout 60 $1"; }

# A fresh rig under $R: the previous database and outputs wiped, munge, MariaDB and slurmdbd
# started, and all three stopped when the calling script exits.
start_rig() {
  trap stop_all EXIT
  stop_all
  rm -rf "$OUT" "$R/log" "$R/run" "$R/mysql" "$R/ALL.txt" "$R/mysql.sock"
  mkdir -p "$OUT"
  write_confs
  start_munge || exit 1
  init_mysql
  start_mysql
  start_slurmdbd || exit 1
}
