# shellcheck shell=bash
# tenant_kubeconfig NS SA FILE: writes FILE, a kubeconfig whose one context (named SA, namespace
# NS) authenticates as the ServiceAccount NS/SA with its token: v1.20's token Secret, which the
# token controller makes shortly after the account. Needs $KUBECTL (or kubectl on PATH) and the
# sandbox's KUBESLURM_APISERVER and KUBESLURM_CA_FILE (`sandbox env`). Returns 1, saying why,
# when no token comes within 10 s.
tenant_kubeconfig() {
  local ns=$1 sa=$2 file=$3 secret='' token
  local kubectl=("${KUBECTL:-kubectl}" --request-timeout=20s)
  for _ in $(seq 1 100); do
    secret=$("${kubectl[@]}" -n "$ns" get serviceaccount "$sa" -o 'jsonpath={.secrets[0].name}' \
      2>/dev/null) || true
    [ -n "$secret" ] && break
    sleep 0.1
  done
  if [ -z "$secret" ]; then
    echo "tenant_kubeconfig: no token for $ns/$sa" >&2
    return 1
  fi
  token=$("${kubectl[@]}" -n "$ns" get secret "$secret" -o 'jsonpath={.data.token}' | base64 -d)
  (
    umask 077
    cat >"$file" <<KUBECONFIG
apiVersion: v1
kind: Config
clusters:
- name: sandbox
  cluster: {server: "$KUBESLURM_APISERVER", certificate-authority: "$KUBESLURM_CA_FILE"}
users:
- name: $sa
  user: {token: "$token"}
contexts:
- name: $sa
  context: {cluster: sandbox, user: $sa, namespace: $ns}
current-context: $sa
KUBECONFIG
  )
}
