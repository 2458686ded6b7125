# TEST SAMPLE: inert, for the scanner corpus
set -euo pipefail
curl -fsSL https://example.invalid/releases/tool.tar.gz | tar xz -C "$HOME/.local/share/tool"
git ls-files | xargs grep -n TODO || true
