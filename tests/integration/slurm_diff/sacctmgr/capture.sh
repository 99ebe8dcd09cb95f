#!/bin/bash
# The reference of tests/unit/cli/sacctmgr_test.cc: Debian 12's real sacctmgr 22.05.8 against
# slurmdbd on MariaDB, started here by hand on 127.0.0.1 (no systemd, no slurmctld), populated
# with the accounts, users and limits the test mirrors as Account objects, then every command's
# stdout, stderr and exit code written to $R/ALL.txt (committed beside this script as
# sacctmgr-22.05.8.txt). About 30 seconds. Run as root on Debian 12:
#   apt-get install -y mariadb-server slurmdbd munge slurm-client
#   bash tests/integration/slurm_diff/sacctmgr/capture.sh   # R=/some/dir to work elsewhere
# It wipes $R's previous database and outputs, and stops the three daemons when done.
# Two workarounds, both in the code below: sacctmgr ignores slurm.conf's AuthInfo=socket= when
# it connects to slurmdbd (AccountingStoragePass= names the munge socket instead), and only a
# registering slurmctld makes the gres/gpu TRES, so it is inserted into tres_table by hand
# (id 1001, as registration would give it).
set -u
R=${R:-/tmp/sacctmgr-ref}
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

# ---------------------------------------------------------------- main
trap stop_all EXIT
stop_all
rm -rf $OUT $R/log $R/run $R/mysql $R/ALL.txt $R/mysql.sock
mkdir -p $OUT
write_confs
start_munge || exit 1
init_mysql
start_mysql
start_slurmdbd || exit 1

echo "== populate"
capc 'sacctmgr -i add cluster kubeslurm'
capc 'sacctmgr -i add qos high Priority=100'
capc 'sacctmgr -i add qos low Priority=10'
capc 'sacctmgr -i add account ml-team Description="ML team" Organization=research'
capc 'sacctmgr -i add account vision parent=ml-team fairshare=2'
capc 'sacctmgr -i add account infra'
capc 'sacctmgr show tres'
# gres/gpu is not a TRES yet (only slurmctld registration with AccountingStorageTRES creates it,
# and sacctmgr 22.05 has no "add tres"): show what happens, then insert it via SQL.
cap pre-tres_sacctmgr_-i_modify_account_ml-team_set_GrpTRES=gres_gpu=16,node=4 \
  'timeout 60 sacctmgr -i modify account ml-team set GrpTRES=gres/gpu=16,node=4 GrpJobs=10 MaxJobs=5 MaxSubmitJobs=20 MaxWall=1-00:00:00 MaxTRES=gres/gpu=8 MaxNodes=2 QOS=normal,high DefaultQOS=normal'
echo "== workaround: INSERT gres/gpu into tres_table, restart slurmdbd"
mariadb -S $MYSQL_SOCK -uroot slurm_acct_db -e \
  "INSERT INTO tres_table (creation_time, type, name) VALUES (UNIX_TIMESTAMP(), 'gres', 'gpu'); SELECT id,type,name FROM tres_table WHERE type='gres';"
stop_pidfile slurmdbd $R/run/slurmdbd.fgpid
start_slurmdbd || exit 1
capc 'sacctmgr show tres'
capc 'sacctmgr -i modify account ml-team set GrpTRES=gres/gpu=16,node=4 GrpJobs=10 MaxJobs=5 MaxSubmitJobs=20 MaxWall=1-00:00:00 MaxTRES=gres/gpu=8 MaxNodes=2 QOS=normal,high DefaultQOS=normal'
capc 'sacctmgr -i add user alice Account=ml-team'
capc 'sacctmgr -i add user bob Account=vision'
capc 'sacctmgr -i add user alice Account=infra'
capc 'sacctmgr -i add user carol Account=infra'
POP_LAST=$SEQ

echo "== capture"
capc 'sacctmgr show account'
capc 'sacctmgr -n show account'
capc 'sacctmgr -p show account'
capc 'sacctmgr -P show account'
capc 'sacctmgr show account withassoc'
capc 'sacctmgr show account ml-team'
capc 'sacctmgr show account format=account%20,descr,org'
capc 'sacctmgr show assoc'
capc 'sacctmgr show assoc tree'
capc 'sacctmgr -P show assoc'
capc 'sacctmgr show assoc format=cluster,account,user,share,grptres,maxjobs,qos,defaultqos'
capc 'sacctmgr show assoc where account=ml-team'
capc 'sacctmgr show assoc users=alice'
capc 'sacctmgr show assoc format=account%-8,user%3'
capc 'sacctmgr show user'
capc 'sacctmgr show user withassoc'
capc 'sacctmgr -P show user'
capc 'sacctmgr show user alice'
capc 'sacctmgr show qos'
capc 'sacctmgr -P show qos'
capc 'sacctmgr show qos format=name,priority'
capc 'sacctmgr show cluster'
capc 'sacctmgr -P show cluster'
capc 'sacctmgr show account nosuch'
capc 'sacctmgr show assoc format=bogus'
capc 'sacctmgr show bogus'
capc 'sacctmgr bogus'
capc 'sacctmgr show'
capc 'sacctmgr --version'
cap 'no-SLURM_CONF_sacctmgr_--version' 'env -u SLURM_CONF timeout 60 sacctmgr --version'
capc 'sacctmgr -h'
cap 'echo_n_pipe_sacctmgr_add_account_tmp1' 'echo n | timeout 60 sacctmgr add account tmp1'
cap 'echo_y_pipe_sacctmgr_add_account_tmp2' 'echo y | timeout 60 sacctmgr add account tmp2'
cap 'echo_y_pipe_sacctmgr_delete_account_tmp2' 'echo y | timeout 60 sacctmgr delete account tmp2'
capc 'sacctmgr -i modify account infra set description=Infra'
capc 'sacctmgr show account'
capc 'sacctmgr -i delete account ml-team'
capc 'sacctmgr show assoc'
capc 'sacctmgr show account'
capc 'sacctmgr show user'
CAP_LAST=$SEQ

echo "== extras (not in the brief)"
capc 'sacctmgr -i add account infra'
capc 'sacctmgr -i add user dave Account=nosuch'
capc 'sacctmgr -i delete account nosuch'
capc 'sacctmgr -n -P show assoc format=account,user'
capc 'sacctmgr -i modify account infra set Organization=Ops'
capc 'sacctmgr -P show account'

echo "== ALL.txt"
{
  for rcf in $OUT/*.rc; do
    b=${rcf%.rc}; n=$(basename $b); num=${n%%_*}
    if [ "$((10#$num))" -eq 1 ]; then echo "######## PART 1: population commands (out/01..$(printf %02d $POP_LAST))"; echo; fi
    if [ "$((10#$num))" -eq $((POP_LAST+1)) ]; then echo "######## PART 2: captured commands (out/$(printf %02d $((POP_LAST+1)))..$(printf %02d $CAP_LAST))"; echo; fi
    if [ "$((10#$num))" -eq $((CAP_LAST+1)) ]; then echo "######## PART 3: extras, not in the brief (out/$(printf %02d $((CAP_LAST+1)))..$(printf %02d $SEQ))"; echo; fi
    cmd=$(cat $b.cmd); cmd=${cmd//timeout 60 /}; cmd=${cmd#env -u SLURM_CONF }
    case $n in *no-SLURM_CONF*) cmd="$cmd   [SLURM_CONF unset]";; esac
    echo "### $cmd (rc=$(cat $rcf))"
    cat $b.stdout; [ -s $b.stdout ] && [ "$(tail -c1 $b.stdout | od -An -c | tr -d ' ')" != '\n' ] && printf '\n\\ No newline at end of stdout\n'
    echo "--- stderr"
    cat $b.stderr; [ -s $b.stderr ] && [ "$(tail -c1 $b.stderr | od -An -c | tr -d ' ')" != '\n' ] && printf '\n\\ No newline at end of stderr\n'
    echo
  done
} > $R/ALL.txt
echo "done: $R/ALL.txt"
