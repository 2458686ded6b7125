# TEST SAMPLE: inert, for the scanner corpus
for i in 1 2 3 4 5; do
  if timeout 1 bash -c '</dev/tcp/127.0.0.1/5432'; then exit 0; fi
  sleep 1
done
exit 1
