#!/usr/bin/env bash
# Makes the Helm chart's check tools (scripts/check-chart.sh) available, from the Go module proxy
# only, in a cache outside the repository, and prints where they are on stdout as shell
# assignments (nothing else goes to stdout):
#   HELM=<cache>/bin/helm                Helm (go install)
#   HELM_PLUGINS=<cache>/helm-plugins    holds unittest/: helm-unittest's plugin.yaml and a binary built here
#   KUBECONFORM=<cache>/bin/kubeconform  the manifest validator
#   SCHEMAS=<cache>/schemas/<stamp>      JSON schemas of every kind the chart renders, strict (unknown
#                                        fields refused), made offline from the Kubernetes OpenAPI
#                                        document and the CRDs in their Go modules (scripts/k8s-json-schemas.ts)
# Idempotent and version-pinned: a tool is rebuilt only when its binary is missing or reports
# another module version; the schemas only when a pinned version or the converter changed.
# Cold (empty Go caches) ≈ minutes on 2 cores, warm ≈ 1 s (docs/decisions.md, "Kubernetes").
set -euo pipefail
cd "$(dirname "$0")/.."

HELM_VERSION=v4.3.2
UNITTEST_VERSION=v1.1.2
KUBECONFORM_VERSION=v0.8.0
# Schemas: Kubernetes (the oldest minor the chart supports, Chart.yaml kubeVersion), and the CRDs
# of what the chart can render besides core kinds.
KUBERNETES_VERSION=v1.34.4
PROMETHEUS_OPERATOR_VERSION=v0.85.0
# (v2.21.1 needs Go 1.27.)
KEDA_VERSION=v2.21.0
GATEWAY_API_VERSION=v1.4.1

CACHE="${AGENTRY_CACHE_DIR:-$HOME/.cache/agentry}"
BIN="$CACHE/bin"
PLUGIN_DIR="$CACHE/helm-plugins/unittest"
mkdir -p "$BIN" "$PLUGIN_DIR"

say() { echo "[chart-tools] $*" >&2; }
fail() {
  echo "ensure-chart-tools: ERROR: $* (is the Go module proxy reachable? go env GOPROXY)" >&2
  exit 1
}
command -v go >/dev/null 2>&1 || fail "Go is not installed; the chart tools are built with go install"

# built_from <binary> <module> <version>: the binary exists and was built from that module version.
built_from() { [[ -x "$1" ]] && go version -m "$1" 2>/dev/null | grep -qE "^\s+mod\s+$2\s+$3(\s|$)"; }

# module_dir <module> <version>: downloads the module (zip from the proxy) and prints its
# directory; go's own reason on stderr when it cannot.
module_dir() {
  local json
  json=$(go mod download -json "$1@$2")
  sed -n 's/^\s*"Error": "\(.*\)",$/[chart-tools] \1/p' <<<"$json" >&2
  sed -n 's/^\s*"Dir": "\(.*\)",$/\1/p' <<<"$json"
}

if ! built_from "$BIN/helm" helm.sh/helm/v4 "$HELM_VERSION"; then
  say "building helm $HELM_VERSION ..."
  GOBIN="$BIN" CGO_ENABLED=0 go install \
    -ldflags "-X helm.sh/helm/v4/internal/version.version=$HELM_VERSION" \
    "helm.sh/helm/v4/cmd/helm@$HELM_VERSION" >&2 || fail "go install helm.sh/helm/v4/cmd/helm@$HELM_VERSION failed"
fi

if ! built_from "$BIN/kubeconform" github.com/yannh/kubeconform "$KUBECONFORM_VERSION"; then
  say "building kubeconform $KUBECONFORM_VERSION ..."
  GOBIN="$BIN" CGO_ENABLED=0 go install "github.com/yannh/kubeconform/cmd/kubeconform@$KUBECONFORM_VERSION" >&2 ||
    fail "go install kubeconform@$KUBECONFORM_VERSION failed"
fi

# helm-unittest's go.mod has a replace directive, which `go install pkg@version` refuses: build it
# inside its own (read-only) module directory instead, where the replace applies. Helm runs it as
# a plugin from HELM_PLUGINS: the module's own plugin.yaml beside the binary it names.
UNTT="$PLUGIN_DIR/untt-$(go env GOOS)-$(go env GOARCH)"
# Built inside its module, the binary says "(devel)": its version is in the ldflags it was built with.
if ! go version -m "$UNTT" 2>/dev/null | grep -q "build.version=$UNITTEST_VERSION\"" ||
  ! grep -q "^version: \"${UNITTEST_VERSION#v}\"" "$PLUGIN_DIR/plugin.yaml" 2>/dev/null; then
  say "building helm-unittest $UNITTEST_VERSION ..."
  src=$(module_dir github.com/helm-unittest/helm-unittest "$UNITTEST_VERSION")
  [[ -n "$src" ]] || fail "go mod download github.com/helm-unittest/helm-unittest@$UNITTEST_VERSION failed"
  (cd "$src" && CGO_ENABLED=0 go build -o "$UNTT.tmp" \
    -ldflags "-X github.com/helm-unittest/helm-unittest/internal/build.version=$UNITTEST_VERSION" \
    ./cmd/helm-unittest >&2) || fail "building helm-unittest $UNITTEST_VERSION failed"
  # Not the install hooks: they download a release binary, which is what this build replaces.
  sed '/^platformHooks:/,$d' "$src/plugin.yaml" >"$PLUGIN_DIR/plugin.yaml"
  mv -f "$UNTT.tmp" "$UNTT"
fi

# The schemas: one directory per set of pinned versions and converter, made once.
converter=scripts/k8s-json-schemas.ts
stamp=$( (echo "$KUBERNETES_VERSION $PROMETHEUS_OPERATOR_VERSION $KEDA_VERSION $GATEWAY_API_VERSION" &&
  cat "$converter") | sha256sum | cut -c1-16)
SCHEMAS="$CACHE/schemas/$stamp"
if [[ ! -f "$SCHEMAS/.complete" ]]; then
  say "making JSON schemas (Kubernetes $KUBERNETES_VERSION and CRDs) ..."
  k8s=$(module_dir k8s.io/kubernetes "$KUBERNETES_VERSION")
  prom=$(module_dir github.com/prometheus-operator/prometheus-operator "$PROMETHEUS_OPERATOR_VERSION")
  keda=$(module_dir github.com/kedacore/keda/v2 "$KEDA_VERSION")
  gateway=$(module_dir sigs.k8s.io/gateway-api "$GATEWAY_API_VERSION")
  for dir in "$k8s" "$prom" "$keda" "$gateway"; do [[ -n "$dir" ]] || fail "a schema module could not be downloaded"; done
  rm -rf "$SCHEMAS.tmp"
  node -r ./scripts/ts-register.js "$converter" "$SCHEMAS.tmp" \
    --openapi "$k8s/api/openapi-spec/swagger.json" \
    --crd "$prom/example/prometheus-operator-crd/monitoring.coreos.com_servicemonitors.yaml" \
    --crd "$keda/config/crd/bases/keda.sh_scaledobjects.yaml" \
    --crd "$keda/config/crd/bases/keda.sh_triggerauthentications.yaml" \
    --crd "$gateway/config/crd/standard/gateway.networking.k8s.io_httproutes.yaml" >&2 ||
    fail "converting the schemas failed"
  touch "$SCHEMAS.tmp/.complete"
  rm -rf "$SCHEMAS" && mv "$SCHEMAS.tmp" "$SCHEMAS"
fi

printf 'HELM=%q\nHELM_PLUGINS=%q\nKUBECONFORM=%q\nSCHEMAS=%q\n' \
  "$BIN/helm" "$CACHE/helm-plugins" "$BIN/kubeconform" "$SCHEMAS"
