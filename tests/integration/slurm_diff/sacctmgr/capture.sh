#!/bin/bash
# The reference of tests/unit/cli/sacctmgr_test.cc: Debian 12's real sacctmgr 22.05.8 against
# slurmdbd on MariaDB, started here by hand on 127.0.0.1 (no systemd, no slurmctld), populated
# with the accounts, users and limits the test mirrors as Account objects, then every command's
# stdout, stderr and exit code written to $R/ALL.txt (committed beside this script as
# sacctmgr-22.05.8.txt). About 30 seconds. Run as root on Debian 12:
#   apt-get install -y mariadb-server slurmdbd munge slurm-client
#   bash tests/integration/slurm_diff/sacctmgr/capture.sh   # R=/some/dir to work elsewhere
# It wipes $R's previous database and outputs, and stops the three daemons when done.
# The daemons and cap/capc are ../slurmdbd_rig.sh's. Only a registering slurmctld makes the
# gres/gpu TRES, so it is inserted into tres_table by hand below (id 1001, as registration would
# give it).
set -u
R=${R:-/tmp/sacctmgr-ref}
# shellcheck source=tests/integration/slurm_diff/slurmdbd_rig.sh
source "$(dirname "${BASH_SOURCE[0]}")/../slurmdbd_rig.sh"

# ---------------------------------------------------------------- main
start_rig

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
