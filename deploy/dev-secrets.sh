#!/usr/bin/env bash
# Creates the secrets the compose stack mounts (deploy/docker-compose.yaml, `secrets:`), for
# local use only: every file is freshly generated here and none is ever committed
# (deploy/secrets/ is git- and docker-ignored).
#
#   deploy/dev-secrets.sh [DIR]          DIR defaults to deploy/secrets; existing files are kept
#
# What it writes, with openssl:
#   AuthKey.p8          an ES256 (P-256, PKCS#8) provider signing key: the workers sign their APNs
#                       provider tokens with it and apns-sim accepts it (--key DEVKEY0001:DEVTEAM001:…)
#   apns-sim-ca.pem     a CA the workers trust for the simulator (apns.ca-file)
#   apns-sim.pem, apns-sim-key.pem
#                       the simulator's server certificate and key. apns-sim generates its own
#                       certificate for localhost/127.0.0.1 only; in compose the workers reach it
#                       as `apns-sim`, so the certificate must carry that name (verification
#                       stays on).
#   api-key             a random API key for `curl -H "Authorization: Bearer $(cat …/api-key)"`
#   api-keys.txt        its digest, "sha256:<hex>", the format of apps.<id>.api-keys-file
#   redis-password      Redis' password (redis.password-file)
#   gateway-key         the online channel's connect-token key (gateway.secret-file, 32 random bytes as hex)
#
# The files are made readable by every user (0644): compose bind-mounts file secrets with their
# host permissions, and the containers run as uid 10001. Fine for a laptop, not for a server.
set -euo pipefail

DIR=${1:-"$(cd "$(dirname "$0")" && pwd)/secrets"}
mkdir -p "$DIR"
cd "$DIR"
umask 022

created=()
if [[ ! -f AuthKey.p8 ]]; then
  openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out AuthKey.p8 2>/dev/null
  created+=(AuthKey.p8)
fi

if [[ ! -f apns-sim-ca.pem || ! -f apns-sim.pem || ! -f apns-sim-key.pem ]]; then
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$work/ca-key.pem" 2>/dev/null
  openssl req -x509 -new -key "$work/ca-key.pem" -sha256 -days 365 \
    -subj "/O=PushFleet/CN=PushFleet dev APNs simulator CA" \
    -addext "basicConstraints=critical,CA:TRUE,pathlen:0" \
    -addext "keyUsage=critical,keyCertSign,cRLSign" \
    -out apns-sim-ca.pem
  openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out apns-sim-key.pem 2>/dev/null
  openssl req -new -key apns-sim-key.pem -subj "/CN=apns-sim" -out "$work/server.csr"
  cat >"$work/server.ext" <<'EXT'
basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature
extendedKeyUsage = serverAuth
subjectAltName = DNS:apns-sim, DNS:localhost, IP:127.0.0.1
EXT
  openssl x509 -req -in "$work/server.csr" -CA apns-sim-ca.pem -CAkey "$work/ca-key.pem" \
    -CAcreateserial -CAserial "$work/ca.srl" -sha256 -days 365 -extfile "$work/server.ext" \
    -out apns-sim.pem 2>/dev/null
  created+=(apns-sim-ca.pem apns-sim.pem apns-sim-key.pem)
fi

if [[ ! -f api-key || ! -f api-keys.txt ]]; then
  openssl rand -hex 32 | tr -d '\n' >api-key
  {
    echo "# SHA-256 digests of the API keys of app 'news', one per line (deploy/secrets/api-key)"
    printf 'sha256:%s\n' "$(openssl dgst -sha256 -r <api-key | cut -d' ' -f1)"
  } >api-keys.txt
  created+=(api-key api-keys.txt)
fi

if [[ ! -f redis-password ]]; then
  openssl rand -hex 24 >redis-password
  created+=(redis-password)
fi

if [[ ! -f gateway-key ]]; then
  openssl rand -hex 32 >gateway-key
  created+=(gateway-key)
fi

chmod 0644 -- *
if ((${#created[@]} > 0)); then
  echo "dev-secrets: created ${created[*]} in $DIR"
else
  echo "dev-secrets: every secret already exists in $DIR"
fi
