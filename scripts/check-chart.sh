#!/usr/bin/env bash
# The Helm chart's checks (issue 36), a step of `npm test`: the tools come from
# scripts/ensure-chart-tools.sh (built once from the Go module proxy into ~/.cache/agentry); every
# step after that is offline.
#   1. helm lint --strict, for each value set of test/chart/values/ (values.schema.json included);
#   2. helm template for each value set, every object validated by kubeconform against the
#      Kubernetes 1.34 schemas and the CRDs', strict: an unknown field, a missing schema or a
#      wrong type fails (the Worker Controller's objects as what the controller makes of them,
#      scripts/controller-objects.ts); and a control that strict mode refuses an unknown field;
#   3. helm unittest: the suites of test/chart/ on the objects that matter.
set -euo pipefail
cd "$(dirname "$0")/.."

eval "$(bash scripts/ensure-chart-tools.sh)"
export HELM_PLUGINS
CHART=deploy/helm/agentry
SCHEMA_LOCATION="$SCHEMAS/{{ .ResourceKind }}{{ .KindSuffix }}.json"
WORK=$(mktemp -d)
trap 'rm -rf -- "$WORK"' EXIT

validate() {
  node -r ./scripts/ts-register.js scripts/controller-objects.ts |
    "$KUBECONFORM" -strict -summary -schema-location "$SCHEMA_LOCATION" -
}

for values in test/chart/values/*.yaml; do
  set_name=$(basename "$values" .yaml)
  echo "[check-chart] $set_name: lint, render, validate" >&2
  "$HELM" lint --strict --quiet "$CHART" -f "$values" >"$WORK/lint" 2>&1 || { cat "$WORK/lint" >&2; exit 1; }
  "$HELM" template agentry "$CHART" --namespace agentry -f "$values" >"$WORK/$set_name.yaml"
  validate <"$WORK/$set_name.yaml"
done

# The control: a rendered Deployment with a field Kubernetes does not have must be refused.
sed 's/^  progressDeadlineSeconds: .*//; 0,/^spec:$/s//spec:\n  notAField: true/' \
  <(printf 'apiVersion: apps/v1\nkind: Deployment\nmetadata: { name: control }\nspec:\n  selector: { matchLabels: { a: b } }\n  template: { metadata: { labels: { a: b } }, spec: { containers: [{ name: c, image: i }] } }\n') \
  >"$WORK/control.yaml"
if validate <"$WORK/control.yaml" >"$WORK/control.out" 2>&1; then
  echo "check-chart: ERROR: kubeconform accepted an unknown field; strict validation is not in force" >&2
  exit 1
fi
grep -q "additional properties 'notAField' not allowed" "$WORK/control.out" ||
  { cat "$WORK/control.out" >&2; echo "check-chart: ERROR: the control failed for another reason" >&2; exit 1; }

echo "[check-chart] unit tests" >&2
"$HELM" unittest -f '../../../test/chart/*_test.yaml' "$CHART"
