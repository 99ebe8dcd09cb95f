# Sourced by the shell tests that run the operator's admission webhook beside a sandbox. The
# sandbox's API server reaches no Service (there is no cluster network), so the webhook
# configurations are pointed at the operator's process on 127.0.0.1.
#
# local_webhook_cert DIR: DIR/tls.crt and DIR/tls.key, self-signed for IP 127.0.0.1.
local_webhook_cert() {
  mkdir -p "$1"
  openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=127.0.0.1 \
    -addext subjectAltName=IP:127.0.0.1 -keyout "$1/tls.key" -out "$1/tls.crt" 2>/dev/null
}

# point_webhooks KIND PORT CERT: each webhook of the configuration KIND/NAME "kubeslurm" calls
# https://127.0.0.1:PORT at its own path, trusting CERT. Needs a `k` function that runs kubectl
# against the sandbox.
point_webhooks() {
  local kind=$1 port=$2 ca i path count patch='['
  ca=$(base64 -w0 <"$3")
  count=$(k get "$kind" kubeslurm -o 'jsonpath={range .webhooks[*]}{.name}{"\n"}{end}' | grep -c .)
  for ((i = 0; i < count; i++)); do
    path=$(k get "$kind" kubeslurm -o "jsonpath={.webhooks[$i].clientConfig.service.path}")
    patch+="{\"op\":\"remove\",\"path\":\"/webhooks/$i/clientConfig/service\"},"
    patch+="{\"op\":\"add\",\"path\":\"/webhooks/$i/clientConfig/url\",\"value\":\"https://127.0.0.1:$port$path\"},"
    patch+="{\"op\":\"replace\",\"path\":\"/webhooks/$i/clientConfig/caBundle\",\"value\":\"$ca\"},"
  done
  k patch "$kind" kubeslurm --type=json -p "${patch%,}]" >/dev/null
}
