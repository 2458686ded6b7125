# TEST SAMPLE: inert, for the scanner corpus
d=$(mktemp -d)
mkfifo "$d/p"
sort < "$d/p" > "$d/out" &
printf 'b\na\n' > "$d/p"
wait
nc -z localhost 8080 || echo 'server down'
