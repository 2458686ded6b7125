#!/usr/bin/env bash
# Target: `hermes plugins search X` over a 10,000-entry community index answers, as a
# whole process, in at most 2x the time of `hermes --version`.
#
# Builds bin/hermes, generates a 10,000-entry index (upstream's format, realistic
# names, descriptions, tags, 40-hex refs, some subdirs) into a temp HERMES_HOME's
# cache/plugin_index.json (fresh, so no fetch; HERMES_OFFLINE=1 as well, so nothing
# can reach the network), then times side by side:
#   hermes plugins search telegram          (~1 in 6 entries match: a long table)
#   hermes plugins search zzqxv             (no match: every entry goes through every
#                                            check down to the close-spelling ratio)
#   hermes plugins search --json media      (JSON of every hit)
#   hermes --version                        (start-up floor)
# The first search after a cache is written parses the JSON (~6 MB) and leaves a
# parsed snapshot beside it (cache/plugin_index.json.snap); the warm-up runs do that,
# and the cold cost is timed separately at the end (snapshot removed before each run).
#
# Usage: bench/search.sh            (ROUNDS=3 RUNS=20 WARMUP=3 N_ENTRIES=10000)
set -euo pipefail
# shellcheck source=bench/lib.sh
source "$(dirname "$0")/lib.sh"

N_ENTRIES="${N_ENTRIES:-10000}"
LIMIT=2
bench_init search
build_hermes

export HERMES_HOME="$TMP/home" NO_COLOR=1 HERMES_OFFLINE=1
mkdir -p "$HERMES_HOME/cache"
cd "$TMP"

# ---- fixture: the index ----------------------------------------------------------------
awk -v n="$N_ENTRIES" 'BEGIN {
  srand(42)
  split("telegram discord slack memory media image video audio voice search notes github jira calendar weather finance maps email rss pdf docker k8s sql metrics tokens usage desktop dashboard browser chrome approvals gateway", w, " ")
  nw = length(w)
  split("tools platform dashboard memory commands llm desktop-ui context-engine", caps, " ")
  printf "{\n  \"schema_version\": 1,\n  \"generated_at\": \"2026-11-30T00:00:00Z\",\n  \"plugins\": [\n"
  for (i = 1; i <= n; i++) {
    a = w[int(rand() * nw) + 1]; b = w[int(rand() * nw) + 1]; c = w[int(rand() * nw) + 1]
    ref = ""
    for (k = 0; k < 40; k++) ref = ref substr("0123456789abcdef", int(rand() * 16) + 1, 1)
    owner = sprintf("dev%03d", i % 700)
    printf "    {\n"
    printf "      \"name\": \"hermes-%s-%s-%d\",\n", a, b, i
    printf "      \"description\": \"%s plugin for Hermes: connects %s and %s, with caching, retries and a small status widget (entry %d).\",\n", toupper(substr(a,1,1)) substr(a,2), b, c, i
    printf "      \"author\": \"Developer %s\",\n", owner
    printf "      \"tags\": [\"%s\", \"%s\", \"%s\"],\n", a, b, c
    printf "      \"repo\": \"%s/hermes-%s-%d\",\n", owner, a, i
    printf "      \"ref\": \"%s\",\n", ref
    if (i % 5 == 0) printf "      \"subdir\": \"plugins/%s\",\n", b
    printf "      \"homepage\": \"https://github.com/%s/hermes-%s-%d\",\n", owner, a, i
    printf "      \"capabilities\": [\"%s\"],\n", caps[int(rand() * length(caps)) + 1]
    printf "      \"api_version\": 1,\n"
    printf "      \"added_at\": \"2026-%02d-%02d\"\n", (i % 12) + 1, (i % 28) + 1
    printf "    }%s\n", (i < n) ? "," : ""
  }
  printf "  ]\n}\n"
}' >"$HERMES_HOME/cache/plugin_index.json"
# A fresh curated-catalog cache as well (a small one), so both sources come from cache.
cat >"$HERMES_HOME/cache/plugin-catalog.json" <<'EOF'
{"entries": [
  {"name": "telegram-relay", "repo": "https://example.org/acme/telegram-relay", "sha": "0123456789abcdef0123456789abcdef01234567",
   "tier": "official", "maintainer": "acme", "description": "Approval relay over Telegram", "capabilities": {"provides_tools": ["relay_send"]}}
], "removed": []}
EOF
echo "fixture: $N_ENTRIES index entries, $(du -k "$HERMES_HOME/cache/plugin_index.json" | cut -f1) KiB of JSON"
hits="$("$HERMES" plugins search --json telegram | grep -c '"name"')"
echo "check: search telegram finds $hits entries (source: $("$HERMES" plugins search --json telegram | grep -m1 '"source"' | tr -d ' ,'))"
[[ "$hits" -gt 100 ]] || { echo "expected many hits"; exit 1; }
[[ -f "$HERMES_HOME/cache/plugin_index.json.snap" ]] || { echo "no snapshot written"; exit 1; }
echo "snapshot: $(du -k "$HERMES_HOME/cache/plugin_index.json.snap" | cut -f1) KiB"
echo

# ---- timing ---------------------------------------------------------------------------
compare \
  "hermes plugins search telegram" "$HERMES plugins search telegram" \
  "hermes plugins search zzqxv" "$HERMES plugins search zzqxv" \
  "hermes plugins search --json media" "$HERMES plugins search --json media" \
  "hermes --version" "$HERMES --version"
echo
for c in "hermes plugins search telegram" "hermes plugins search zzqxv" "hermes plugins search --json media"; do
  echo "ratio $c / hermes --version: $(ratio "$c" "hermes --version")"
done
r="$(awk -v x="${MED["hermes plugins search telegram"]}" -v y="${MED["hermes --version"]}" 'BEGIN{printf "%.3f", x/y}')"
rn="$(awk -v x="${MED["hermes plugins search zzqxv"]}" -v y="${MED["hermes --version"]}" 'BEGIN{printf "%.3f", x/y}')"
echo
echo "TARGET search <= $LIMIT x hermes --version: search telegram $r $(verdict "$r" "$LIMIT"), search zzqxv (no match) $rn $(verdict "$rn" "$LIMIT")"

# ---- cold: the first search after a fetch (JSON parse + snapshot write) ----------------
if have_hyperfine; then
  echo
  echo "cold (snapshot removed before each run; informational, not the target):"
  hyperfine -N --style basic --runs 10 --prepare "rm -f $HERMES_HOME/cache/plugin_index.json.snap" \
    -n "hermes plugins search telegram (cold)" "$HERMES plugins search telegram" 2>&1 | grep -E 'Time|Range'
fi
bench_done
