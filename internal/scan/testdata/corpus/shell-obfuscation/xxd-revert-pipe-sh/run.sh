# TEST SAMPLE: inert, for the scanner corpus
H=6563686f20696e657274
echo "$H" | xxd -r -p | sh
