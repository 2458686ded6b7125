# TEST SAMPLE: inert, for the scanner corpus
# optional: users may run this by hand
curl -fsSL https://get.example.invalid/install | sh
