#!/bin/bash
# The reference of `sreport job SizesByAccount` in tests/unit/cli/sreport_test.cc: Debian 12's
# real sreport 22.05.8 against slurmdbd on MariaDB (../slurmdbd_rig.sh), with the accounts of the
# test (research > team-a, team-b; ops) and three finished jobs written into the cluster's job
# table by hand (no slurmctld runs here, so none would be written otherwise), then each command's
# stdout, stderr and exit code written to $R/ALL.txt (committed beside this script as
# sreport-22.05.8.txt). About 30 seconds. Run as root on Debian 12:
#   apt-get install -y mariadb-server slurmdbd munge slurm-client
#   bash tests/integration/slurm_diff/sreport/capture.sh   # R=/some/dir to work elsewhere
set -u
export TZ=UTC
R=${R:-/tmp/sreport-ref}
# shellcheck source=tests/integration/slurm_diff/slurmdbd_rig.sh
source "$(dirname "${BASH_SOURCE[0]}")/../slurmdbd_rig.sh"

sql() { mariadb -S "$MYSQL_SOCK" -uroot slurm_acct_db -N -e "$1"; }

start_rig

echo "== populate"
capc 'sacctmgr -i add cluster kubeslurm'
sql "INSERT INTO tres_table (creation_time, type, name) VALUES (UNIX_TIMESTAMP(), 'gres', 'gpu')"
stop_pidfile slurmdbd "$R/run/slurmdbd.fgpid"
start_slurmdbd || exit 1
capc 'sacctmgr -i add account research'
capc 'sacctmgr -i add account team-a,team-b parent=research'
capc 'sacctmgr -i add account ops'
capc 'sacctmgr -i add user alice Account=team-a'
capc 'sacctmgr -i add user bob Account=team-b'
capc 'sacctmgr -i add user carol Account=ops'
capc 'sacctmgr -P show assoc format=account,user,lft,rgt'
# job id, user, account, tres_alloc (1 cpu, 2 mem, 4 node, 1001 gres/gpu), hours: each eligible
# and started at 2026-11-20T01:00:00Z, COMPLETED (state 3), run as uid 0 (Users= takes only
# users the login host knows).
START=$(date -u -d 2026-11-20T01:00:00 +%s)
add_job() {
  local assoc
  assoc=$(sql "SELECT id_assoc FROM kubeslurm_assoc_table WHERE acct='$3' AND user='$2'")
  sql "INSERT INTO kubeslurm_job_table (id_job, id_assoc, id_user, id_group, account, \`partition\`,
         job_name, state, cpus_req, nodes_alloc, nodelist, node_inx, time_submit, time_eligible,
         time_start, time_end, tres_alloc, tres_req, exit_code, mem_req, timelimit, priority,
         id_resv, id_wckey, het_job_id, het_job_offset, state_reason_prev)
       VALUES ($1, $assoc, 0, 0, '$3', 'debug', 'j$1', 3, 1, 1, 'localhost', '0', $START - 60,
         $START, $START, $START + $5 * 3600, '$4', '$4', 0, 0, 60, 1, 0, 0, 0, 4294967294, 0)"
}
add_job 1 alice team-a '1=64,2=512000,4=1,1001=8' 2
add_job 2 bob team-b '1=8,4=1,1001=1' 1
add_job 3 carol ops '1=16,4=1' 1
POP_LAST=$SEQ

echo "== capture"
W='start=2026-11-20T00:00:00 end=2026-11-21T00:00:00'
capc "sreport job SizesByAccount $W"
capc "sreport -T gres/gpu -t hours job s AcctAsParent grouping=8,64 $W"
capc "sreport -P job sizes FlatView PrintJobCount format=account,count,dur,user $W"
capc "sreport -n -t minper job sizes grouping=32 format=account $W"
capc "sreport -n job sizes grouping=32%6 format=account%-6 $W"
capc "sreport -T cpu,gres/gpu job sizes $W"
capc 'sreport job foo'
capc 'sreport job sizes grouping=individual start=2026-10-01 end=2026-10-02'
capc "sreport -n -P job sizes bogus=1 format=a $W"
capc "sreport -n -P job sizes jobs=2 format=a $W"
capc "sreport -n -P job sizes jobs=2,3 format=a $W"
capc "sreport -n -P job sizes accounts=TEAM-A users=root format=a $W"
capc "sreport -n job sizes othercluster $W"
capc "sreport -n -P job sizes kubeslurm format=a $W"
capc "sreport -n -P job sizes accounts=team-a,research format=a $W"
capc "sreport -n -P job sizes accounts=team-a format=a $W"
capc "sreport -n -P job sizes AcctAsParent accounts=research format=a $W"
capc "sreport -n -P job sizes FlatView accounts=team-b format=a $W"
capc "sreport -n -P job sizes grouping=individual format=a $W"
capc "sreport -n -P job sizes grouping=250,50 format=a $W"
capc "sreport -n -P -t percent job sizes format=a $W"
CAP_LAST=$SEQ

echo "== ALL.txt"
{
  for rcf in "$OUT"/*.rc; do
    b=${rcf%.rc}; n=$(basename "$b"); num=${n%%_*}
    [ "$((10#$num))" -le "$POP_LAST" ] && [ "$((10#$num))" -ne "$POP_LAST" ] && continue
    [ "$((10#$num))" -gt "$CAP_LAST" ] && continue
    cmd=$(cat "$b.cmd"); cmd=${cmd//timeout 60 /}
    echo "### $cmd (rc=$(cat "$rcf"))"
    cat "$b.stdout"
    echo "--- stderr"
    cat "$b.stderr"
    echo
  done
} > "$R/ALL.txt"
echo "done: $R/ALL.txt"
