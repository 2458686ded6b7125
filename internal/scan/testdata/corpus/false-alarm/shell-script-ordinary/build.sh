# TEST SAMPLE: inert, for the scanner corpus
set -euo pipefail
while getopts v: opt; do case $opt in v) VERSION=$OPTARG;; esac; done
mkdir -p dist
tar czf "dist/p-${VERSION:-dev}.tgz" plugin.yaml __init__.py
exec "$@"
