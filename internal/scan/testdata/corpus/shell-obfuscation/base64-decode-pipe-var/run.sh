# TEST SAMPLE: inert, for the scanner corpus
P=ZWNobyBpbmVydAo=
printf %s "$P" | base64 --decode | bash
