# Sourced by the shell tests that start servers on 127.0.0.1.
# free_port: a port nothing listens on, below the ephemeral range (32768 and up), so no client
# socket of this host can be holding it; the sandbox's components take random ports too.
free_port() {
  local p
  while :; do
    p=$((20000 + RANDOM % 12000))
    (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null || { echo "$p"; return; }
  done
}
