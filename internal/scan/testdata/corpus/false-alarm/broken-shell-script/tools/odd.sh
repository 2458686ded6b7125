# TEST SAMPLE: inert, for the scanner corpus
if [ -f x ]; then
  grep -q y x | sort )
fi (
nc -z localhost 80
